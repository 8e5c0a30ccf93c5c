"""The interface every set-union mechanism follows, and the shared release path.

release(D) = decisions( weights( policy( bound(D, key), order(key) ) ) ):
  1. order(key): users sorted by HMAC(key, user id)              (user_order.py)
  2. bound: each user's set capped to Δ0 items with own randomness (_kernels.bound_rows)
  3. weights: the mechanism's histogram over candidate items       (subclass)
  4. decisions: item released iff ExactBernoulli(P(H[u] + Z > ρ))  (privacy/noise.py)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..itemsets import ItemSets, item_hashes
from ..privacy.accounting import Stage
from ..privacy.noise import (RandomSource, bernoulli, gaussian_release_probability,
                             laplace_release_probability)
from ..privacy.params import check_choice, check_delta, check_epsilon, check_positive_int
from ..release import Release
from . import _kernels
from .user_order import check_key, user_order

_NO_RANK = np.zeros(1, dtype=np.int64)
MISSING_RANK = 2**31 - 1  # items absent from a public priority table rank after all listed ones
# Δ0 above this is never useful (a user's distinct items are capped at extraction, 100,000 by
# default) and the thresholds maximise over t = 1..Δ0 in memory
MAX_ITEMS_PER_USER = 1_000_000



@dataclass(frozen=True)
class Bounded:
    """Per-user capped item sets (CSR, same rows as the ItemSets) and the processing order."""

    order: np.ndarray    # int64 row indices, keyed-hash order
    indptr: np.ndarray   # int64
    items: np.ndarray    # int32 item ids, priority order within a row when it matters
    counts: np.ndarray   # int32, the user's own frequency of each kept item


def bound_itemsets(itemsets: ItemSets, key: bytes, max_items: int, mode: int = 0,
                   ordered: bool = False, rank: np.ndarray = _NO_RANK) -> Bounded:
    """Keyed user order and per-user caps (see ``_kernels.bound_rows`` for the priority modes)."""
    order, seeds = user_order(itemsets.user_ids, key)
    indptr, pos = _kernels.bound_rows(itemsets.indptr, itemsets.items, itemsets.counts, seeds,
                                      itemsets.vocab.hashes(), rank, max_items, mode, ordered)
    return Bounded(order, indptr, itemsets.items[pos], itemsets.counts[pos])
    # bounded: int32 ids and own counts, CSR by user, ≤ Δ0 per row


def spread_weights(bounded: Bounded, n_items: int, power: float) -> np.ndarray:
    """Each user adds 1/k^power to each of its k kept items (1: L1 mass 1; 0.5: L2 norm 1)."""
    lengths = np.diff(bounded.indptr)
    per_row = np.zeros(lengths.size, dtype=np.float64)
    nz = lengths > 0
    per_row[nz] = lengths[nz].astype(np.float64) ** -power
    return np.bincount(bounded.items, weights=np.repeat(per_row, lengths), minlength=n_items)


class Mechanism:
    """Base class. Subclasses set ``name``, ``noise`` and implement ``_weights``.

    Attributes every mechanism has: ``epsilon``, ``delta``, ``threshold`` (ρ), ``noise_scale``
    (Laplace b or Gaussian σ), ``max_items_per_user`` (Δ0).
    """

    name: ClassVar[str]
    summary: ClassVar[str]                   # one line for `dp-vocab mechanisms`
    version: ClassVar[int] = 1
    noise: ClassVar[str]                     # "laplace" | "gaussian" | "optimal"
    sensitivity: ClassVar[str]               # the bound the property tests check
    support: ClassVar[str] = "positive"      # candidates: items with weight > 0 ("capped": all)
    sampling_modes: ClassVar[tuple[str, ...]] = ("uniform", "top")

    threshold: float
    noise_scale: float

    def __init__(self, epsilon: float, delta: float, max_items_per_user: int = 100,
                 sampling: str = "uniform"):
        self._set("epsilon", check_epsilon(epsilon))
        self._set("delta", check_delta(delta))
        self._set("max_items_per_user", check_positive_int(
            max_items_per_user, "max_items_per_user", maximum=MAX_ITEMS_PER_USER))
        self._set("sampling", check_choice(sampling, "sampling", self.sampling_modes))
        self._calibrate()

    # -- immutability ----------------------------------------------------------------------
    def _set(self, name, value):
        object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; make a new one with "
                             f"make_mechanism({self.name!r}, ...)")

    @property
    def registry_name(self) -> str:
        return f"dp_vocab.{self.name}.v{self.version}"

    def _calibrate(self) -> None:
        raise NotImplementedError

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta,
                "max_items_per_user": self.max_items_per_user, "sampling": self.sampling}

    def privacy(self) -> dict:
        """The privacy claim, as the report prints it."""
        return {"guarantee": f"({self.epsilon:g}, {self.delta:g})-DP, add/remove one user",
                "sensitivity": self.sensitivity, "noise": self.noise,
                "threshold": self.threshold, "noise_scale": self.noise_scale,
                "release_decisions": "exact Bernoulli of the closed-form release probability "
                                     "(no noise value is materialised)"}

    @property
    def noise_multiplier(self) -> float | None:
        """Noise scale / sensitivity of the noise part (for accounting); None if not additive."""
        return self.noise_scale if self.noise in ("laplace", "gaussian") else None

    def stage(self, name: str = "selection") -> Stage:
        """This mechanism's entry in the privacy ledger."""
        return Stage(name=name, mechanism=self.registry_name, epsilon=self.epsilon,
                     delta=self.delta, noise=self.noise if self.noise_multiplier else "other",
                     noise_multiplier=self.noise_multiplier,
                     delta_threshold=self.delta / 2 if self.noise == "gaussian" else self.delta)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if not isinstance(v, dict))
        return f"{type(self).__name__}({args})"

    # -- pipeline --------------------------------------------------------------------------
    # How the weights are formed, so that a backend can compute them where the data lives:
    # "count" (+1 per kept item), ("spread", p) (+1/k^p per kept item), or None: a sequential
    # policy that needs all users in keyed-hash order (``_weights`` on the driver).
    weight_kind: ClassVar[object] = None

    def _priority(self) -> tuple[int, bool, dict | None]:
        """(priority mode for bound_rows, rows must stay in priority order, public ranks)."""
        return (0 if self.sampling == "uniform" else 1), False, None

    def bound(self, itemsets: ItemSets, key: bytes) -> Bounded:
        mode, ordered, ranks = self._priority()
        rank = _NO_RANK if ranks is None else np.fromiter(
            (ranks.get(s, MISSING_RANK) for s in itemsets.vocab.strings), dtype=np.int64,
            count=len(itemsets.vocab))
        return bound_itemsets(itemsets, key, self.max_items_per_user, mode, ordered, rank)

    def _weights(self, bounded: Bounded, n_items: int) -> np.ndarray:
        """Pre-noise weight of every item id (float64, length n_items)."""
        kind = self.weight_kind
        if kind == "count":
            return np.bincount(bounded.items, minlength=n_items).astype(np.float64)
        if isinstance(kind, tuple) and kind[0] == "spread":
            return spread_weights(bounded, n_items, kind[1])
        raise NotImplementedError

    def _candidates(self, bounded: Bounded, weights: np.ndarray) -> np.ndarray:
        if self.support == "capped":
            mask = np.zeros(weights.size, dtype=bool)
            mask[bounded.items] = True
            return np.flatnonzero(mask)
        return np.flatnonzero(weights > 0)

    def _histogram_arrays(self, itemsets: ItemSets, key: bytes) -> tuple[np.ndarray, np.ndarray]:
        bounded = self.bound(itemsets, key)
        weights = self._weights(bounded, len(itemsets.vocab))
        cand = self._candidates(bounded, weights)
        return cand, weights[cand]   # candidates: item ids; weights: float64, pre-noise

    def _histogram_strings(self, data, key: bytes) -> tuple[list[str], np.ndarray]:
        """Candidates and weights in a canonical order (by item hash), whatever the backend,
        so that a seeded run draws the same decisions for the same items everywhere."""
        if isinstance(data, ItemSets):
            cand, w = self._histogram_arrays(data, key)
            hashes = data.vocab.hashes()[cand]
            strings = data.vocab.strings
            names = [strings[i] for i in cand.tolist()]
        else:  # a distributed dataset computes the weights where the data lives
            names, w = data.histogram(self, key)
            hashes = item_hashes(names)
        order = np.argsort(hashes, kind="stable")
        return [names[i] for i in order.tolist()], np.asarray(w, dtype=np.float64)[order]

    def histogram(self, itemsets, key: bytes) -> dict[str, float]:
        """Pre-noise weights of the release candidates for the user order fixed by ``key``.

        Deterministic given the key. Private: for tests and audits, never for output.
        """
        names, w = self._histogram_strings(itemsets, check_key(key))
        return dict(zip(names, w.tolist()))

    def release_probability(self, weights: np.ndarray) -> np.ndarray:
        """P(candidate with weight w is released), in closed form."""
        if self.noise == "laplace":
            return laplace_release_probability(weights, self.threshold, self.noise_scale)
        return gaussian_release_probability(weights, self.threshold, self.noise_scale)

    def release(self, itemsets, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        """Run the mechanism. ``key`` fixes the user order and bounding (fresh if None)."""
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        names, w = self._histogram_strings(itemsets, key)
        keep, values = self._decide(w, random)
        released = [n for n, k in zip(names, keep.tolist()) if k]
        counts = None
        if values is not None:
            counts = dict(zip(released, values[keep].tolist()))
        return Release(
            items=sorted(released), mechanism=self.registry_name,
            params=self.params(), epsilon=self.epsilon, delta=self.delta,
            randomness=random.describe(), privacy=self.privacy(), counts=counts,
            counts_info=self._counts_info() if counts is not None else None,
            ledger=[self.stage().to_dict()],
        )

    def _decide(self, weights: np.ndarray, random: RandomSource):
        """(released mask, published noisy values or None). Default: set-only release."""
        return bernoulli(self.release_probability(weights), random), None

    def _counts_info(self) -> dict:
        return {}
