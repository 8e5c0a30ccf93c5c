"""Noisy counts over a public vocabulary: a separate, budgeted release. Proof: count_release.md.

Once the vocabulary V is released it is public, so counting over V needs no threshold and no δ for
the support. Each user contributes min(c_u(w), C) for at most k of its items in V (its most
frequent, ties by its own keyed randomness), so the count vector has L1 ≤ k·C and L2 ≤ √k·C.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..errors import ParameterError
from ..bounding import EXACT_SQUARES, MAX_ITEMS_PER_USER, Bounding, Priority, UserData
from ..privacy.accounting import Stage, zcdp_rho_for
from ..privacy.calibrate import round_up
from ..privacy.noise import RandomSource, discrete_gaussian, discrete_laplace
from ..privacy.params import check_delta, check_epsilon, check_positive_int


class CountRelease:
    """Base: validated (ε, k, C); ``release_counts`` returns {item: noisy count ≥ 0}."""

    name: ClassVar[str]
    version: ClassVar[int] = 1
    namespace: ClassVar[str] = "dp_vocab"
    noise: ClassVar[str]
    noise_scale: float

    def _noise(self, n: int, random: RandomSource) -> np.ndarray:
        raise NotImplementedError

    def __init__(self, epsilon: float, max_items_per_user: int = 100, max_count: int = 5):
        self.epsilon = check_epsilon(epsilon, "counts.epsilon")
        self.max_items_per_user = check_positive_int(
            max_items_per_user, "counts.max_items_per_user", maximum=MAX_ITEMS_PER_USER)
        self.max_count = check_positive_int(max_count, "counts.max_count", maximum=2 ** 31 - 1)

    @property
    def registry_name(self) -> str:
        return f"{self.namespace}.{self.name}.v{self.version}"

    @property
    def bounding(self) -> Bounding:
        """Each user's k most frequent items of the vocabulary, ties by its keyed randomness."""
        return Bounding(self.max_items_per_user, Priority.OWN_COUNT)

    def true_sums(self, data: UserData, items: list[str], key: bytes) -> np.ndarray:
        """Clipped per-item sums (int64, aligned with ``items``), computed where the data lives
        (``UserData.clipped_count_sums``). Private: never output."""
        return data.clipped_count_sums(items, key, self.bounding, self.max_count)

    def release_counts(self, data: UserData, items: list[str],
                       random: RandomSource) -> dict[str, int]:
        sums = self.true_sums(data, items, random.key())
        noisy = np.maximum(sums + self._noise(len(items), random), 0)  # clamping: post-processing
        return dict(zip(items, noisy.tolist()))

    def info(self) -> dict:
        return {"route": "separate count release over the released vocabulary",
                "noise": self.noise, "scale": self.noise_scale,
                "value": f"occurrences, each user's count clipped to {self.max_count} on at most "
                         f"{self.max_items_per_user} of its items, plus noise, clamped at 0",
                "epsilon": self.epsilon, **({"delta": self.delta} if hasattr(self, "delta") else {})}


class DiscreteLaplaceCounts(CountRelease):
    """ε-DP counts: L1 sensitivity k·C, exact discrete Laplace noise with scale k·C/ε."""

    name = "discrete_laplace_counts"
    noise = "discrete_laplace"

    def __init__(self, epsilon: float, max_items_per_user: int = 100, max_count: int = 5):
        super().__init__(epsilon, max_items_per_user, max_count)
        self.noise_scale = round_up(self.max_items_per_user * self.max_count / self.epsilon)

    def _noise(self, n, random):
        return discrete_laplace(self.noise_scale, n, random)

    def stage(self, name: str = "counts") -> Stage:
        return Stage(name=name, mechanism=self.registry_name, epsilon=self.epsilon, delta=0.0,
                     noise="discrete_laplace", noise_multiplier=1.0 / self.epsilon,
                     sensitivity=self.max_items_per_user * self.max_count)


class DiscreteGaussianCounts(CountRelease):
    """(ε, δ)-DP counts: L2 sensitivity √k·C, exact discrete Gaussian noise with σ chosen so the
    release is ρ-zCDP, ρ = (√k·C)²/(2σ²) (Canonne-Kamath-Steinke 2020), with ρ the largest value
    whose zCDP → (ε, δ) conversion gives ε."""

    name = "discrete_gaussian_counts"
    noise = "discrete_gaussian"

    def __init__(self, epsilon: float, delta: float, max_items_per_user: int = 100,
                 max_count: int = 5):
        super().__init__(epsilon, max_items_per_user, max_count)
        self.delta = check_delta(delta, "counts.delta")
        self.rho = zcdp_rho_for(self.epsilon, self.delta)
        l2 = math.sqrt(self.max_items_per_user) * self.max_count
        self.noise_scale = round_up(l2 / math.sqrt(2.0 * self.rho))

    def _noise(self, n, random):
        return discrete_gaussian(self.noise_scale, n, random)

    def stage(self, name: str = "counts") -> Stage:
        return Stage(name=name, mechanism=self.registry_name, epsilon=self.epsilon,
                     delta=self.delta, noise="zcdp", rho=self.rho)


class NormalisedGaussianCounts(DiscreteGaussianCounts):
    """(ε, δ)-DP relative frequencies: each user's clipped counts a over its k kept items are
    scaled to L2 norm ``scale`` S and floored, ⌊S·a/‖a‖₂⌋, so every user's integer vector has L2
    norm ≤ S whatever k; exact discrete Gaussian noise with σ = S/√(2ρ), ρ as for
    ``DiscreteGaussianCounts``. A user holding few of the items weighs as much as one holding
    many: the noise is that of one item per user, where clipping pays for √k·C. The values are
    in units of S (weighted user counts), what tokenizer trainers need: relative frequencies."""

    name = "normalised_gaussian_counts"

    def __init__(self, epsilon: float, delta: float, max_items_per_user: int = 1000,
                 max_count: int = 1, scale: int = 100):
        self.scale = check_positive_int(scale, "counts.scale", maximum=2 ** 20)
        super().__init__(epsilon, delta, max_items_per_user, max_count)
        if self.max_count ** 2 * self.max_items_per_user >= EXACT_SQUARES:
            # the floor's safety margin needs each user's sum of squares exact in a float
            largest = math.isqrt((EXACT_SQUARES - 1) // self.max_items_per_user)
            raise ParameterError(
                "counts.max_count", self.max_count,
                f"an integer from 1 to {largest:,} with max_items_per_user = "
                f"{self.max_items_per_user:,} (max_count² × max_items_per_user below 2**53)",
                fix="Lower counts.max_count or counts.max_items_per_user.")
        self.noise_scale = round_up(self.scale / math.sqrt(2.0 * self.rho))

    def true_sums(self, data: UserData, items: list[str], key: bytes) -> np.ndarray:
        return data.clipped_count_sums(items, key, self.bounding, self.max_count, self.scale)

    def info(self) -> dict:
        return {**super().info(),
                "value": f"weighted users: each user's counts, clipped to {self.max_count} on at "
                         f"most {self.max_items_per_user} of its items, scaled to L2 norm "
                         f"{self.scale} and floored; plus noise, clamped at 0"}


def check_counts_route(mechanism, counts) -> None:
    if counts is not None and mechanism.publishes_counts:
        raise ParameterError("counts", "a [counts] section together with "
                             "mechanism.noisy_counts = true", "one route for counts",
                             "Remove [counts] or set mechanism.noisy_counts = false.")
