"""A mechanism's privacy claim as data: what the proofs beside the modules establish, what
``privacy.json`` prints and what the shared contract suite checks (tests/test_mechanism_contract).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Norm(enum.Enum):
    L1 = "L1"
    L2 = "L2"


class Noise(str, enum.Enum):
    """The noise of a release decision (a str, so records print its value)."""

    LAPLACE = "laplace"
    GAUSSIAN = "gaussian"
    OPTIMAL = "optimal"     # the optimal one-item keep probability π* (no additive noise)
    OTHER = "other"         # composed of other stages (top-k)

    def __str__(self) -> str:   # "gaussian", not "Noise.GAUSSIAN", wherever it is formatted
        return self.value


class Support(enum.Enum):
    """Which items are release candidates."""

    POSITIVE = "positive"   # items with positive weight
    CAPPED = "capped"       # every item in some user's capped set, zero weights included (GW)


@dataclass(frozen=True)
class Sensitivity:
    """How far one user (added or removed) moves the pre-noise histogram H, for one order key.

    ``‖H(D) − H(D′)‖_norm ≤ bound``; ``monotone``: H(D) ≥ H(D′) on every item;
    ``lone_item_power`` p: each of the user's t items that nobody else holds weighs ≤ t^−p
    (what the threshold is derived from); ``lone_items_positive``: at most this many of them
    weigh more than 0 (GW); ``exact``: the user's own weights are added as they are (parallel
    mechanisms), so H(D) − H(D′) is exactly its weight vector, |S_X|^−p on each of its items."""

    norm: Norm
    bound: float
    monotone: bool = False
    lone_item_power: float | None = None
    lone_items_positive: int | None = None
    exact: bool = False
    cap: float | None = None   # no item's weight exceeds this (the policies' cutoff Γ)
    text: str = ""


@dataclass(frozen=True)
class PrivacyClaim:
    """(ε, δ)-DP for add/remove one user, from this sensitivity, noise and threshold."""

    epsilon: float
    delta: float
    sensitivity: Sensitivity
    noise: Noise
    noise_scale: float    # Laplace b, Gaussian σ (of the first round or level, if several)
    threshold: float      # ρ

    @property
    def guarantee(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP, add/remove one user"
