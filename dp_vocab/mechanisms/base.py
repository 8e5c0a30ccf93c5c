"""The interface every set-union mechanism follows, and the shared release path.

release(D) = decisions( weights( policy( bound_sets(D, key), order(key) ) ) ):
  1. order(key): users sorted by PRF(key, user id)                (bounding/user_order.py)
  2. bound_sets: each user's set capped to Δ0 items with own randomness  (bounding: ``Bounding``)
  3. weights: the mechanism's histogram over candidate items        (``weighting`` or a policy)
  4. decisions: item released iff ExactBernoulli(P(H[u] + Z > ρ))   (privacy/noise.py)

Mechanisms ask their input only what the ``bounding.UserData`` protocol offers, so the same
mechanism runs on item sets in memory and on a Dask cluster. Proof of the shared steps:
mechanisms/README.md; each family's proof is the .md file beside its module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, TypeVar, final

import numpy as np

from ..bounding import (MAX_ITEMS_PER_USER, BoundedSets, Bounding, Input, ItemWeights, NamesOf,
                        Priority, UserData, Weighting, canonical_order, check_key, user_weights)
from ..privacy.accounting import Stage
from ..privacy.noise import (RandomSource, bernoulli, gaussian_release_probability,
                             laplace_release_probability)
from ..privacy.params import check_choice, check_delta, check_epsilon, check_positive_int
from ..data.release import Release
from .claim import Noise, Norm, PrivacyClaim, Sensitivity, Support

M = TypeVar("M", bound="Mechanism")


@dataclass(frozen=True)
class Selection:
    """What a mechanism's decisions released (items in any order), the noisy counts it paid
    for (None if none) and its other DP outputs (per round, per level)."""

    items: list[str]
    counts: dict[str, float] | None = None
    details: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, repr=False)
class Mechanism:
    """Base class. Subclasses set ``name``, ``noise`` and their histogram (``weighting``,
    ``_weights`` or ``_histogram``) and, where it is not the default, their decision rule
    (``_decide``, or ``_select`` for several rounds or levels); ``release`` is the same for all.

    Attributes every mechanism has: ``epsilon``, ``delta``, ``threshold`` (ρ), ``noise_scale``
    (Laplace b or Gaussian σ), ``max_items_per_user`` (Δ0).
    """

    name: ClassVar[str]
    summary: ClassVar[str]                   # one line for `dp-vocab mechanisms`
    version: ClassVar[int] = 1
    namespace: ClassVar[str] = "dp_vocab"    # another package registers under its own
    noise: ClassVar[Noise]
    support: ClassVar[Support] = Support.POSITIVE
    sampling_modes: ClassVar[tuple[str, ...]] = ("uniform", "top")
    input: ClassVar[Input] = Input.ITEM_SETS  # what the backend loads for it
    scope: ClassVar[str] = ""                 # "per round: ": the claim holds per stage

    epsilon: float
    delta: float
    max_items_per_user: int = 100
    sampling: str = "uniform"
    # calibrated from the parameters in __post_init__
    threshold: float = field(init=False)
    noise_scale: float = field(init=False)

    def __post_init__(self) -> None:
        self._validate()
        self._calibrate()

    def _validate(self) -> None:
        """Check (and normalise) every parameter; subclasses add theirs."""
        self._set("epsilon", check_epsilon(self.epsilon))
        self._set("delta", check_delta(self.delta))
        self._set("max_items_per_user", check_positive_int(
            self.max_items_per_user, "max_items_per_user", maximum=MAX_ITEMS_PER_USER))
        self._set("sampling", check_choice(self.sampling, "sampling", self.sampling_modes))

    def _set(self, name: str, value: object) -> None:
        """Only validation and calibration set fields: a mechanism is a frozen value."""
        object.__setattr__(self, name, value)

    @property
    def registry_name(self) -> str:
        return f"{self.namespace}.{self.name}.v{self.version}"

    # (ε, δ, Δ0) → (noise scale, threshold ρ), for mechanisms calibrated by one function
    calibration: ClassVar[staticmethod[[float, float, int], tuple[float, float]] | None] = None

    def _calibrate(self) -> None:
        if self.calibration is None:
            raise NotImplementedError
        scale, rho = self.calibration(self.epsilon, self.delta, self.max_lone_items)
        self._set("noise_scale", scale)
        self._set("threshold", rho)

    @property
    def max_lone_items(self) -> int:
        """The most items a user alone can hold among those the threshold ρ guards: the t of
        ρ's max over 1 ≤ t ≤ this (Δ0, unless a mechanism caps some items more tightly)."""
        return self.max_items_per_user

    def for_extractor(self, extractor) -> "Mechanism":
        """This mechanism for items produced by ``extractor`` (a recipe's [items]): mechanisms
        with a public item list return a new mechanism whose list holds only what the extractor
        yields (public.py)."""
        return self

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta,
                "max_items_per_user": self.max_items_per_user, "sampling": self.sampling}

    def sensitivity(self) -> Sensitivity:
        """The sensitivity the proof establishes (parallel mechanisms: from their weighting)."""
        w = self.weighting
        if w is Weighting.COUNT:
            norm, bound, text = Norm.L1, float(self.max_items_per_user), \
                "H(D) - H(D') = indicator of S_X: L1 <= Δ0, Linf <= 1"
        elif w is Weighting.L1:
            norm, bound, text = Norm.L1, 1.0, "L1 = 1 (weights 1/k on the user's k items)"
        elif w is Weighting.L2:
            norm, bound, text = Norm.L2, 1.0, "L2 = 1 (weights 1/sqrt(k) on the user's k items)"
        else:
            raise NotImplementedError
        return Sensitivity(norm, bound, monotone=True, lone_item_power=w.power, exact=True,
                           text=self.scope + text)

    @property
    def claim(self) -> PrivacyClaim:
        """The privacy claim as data (proof: the .md file beside the mechanism's module)."""
        return PrivacyClaim(self.epsilon, self.delta, self.sensitivity(), self.noise,
                            self.noise_scale, self.threshold)

    def privacy(self) -> dict:
        """The privacy claim, as the report prints it."""
        claim = self.claim
        return {"guarantee": claim.guarantee, "sensitivity": claim.sensitivity.text,
                "noise": self.noise, "threshold": self.threshold,
                "noise_scale": self.noise_scale,
                "release_decisions": "exact Bernoulli of the closed-form release probability "
                                     "(no noise value is materialised)"}

    @property
    def noise_multiplier(self) -> float | None:
        """Noise scale / sensitivity of the noise part (for accounting); None if not additive."""
        return self.noise_scale if self.noise in ("laplace", "gaussian") else None

    @property
    def publishes_counts(self) -> bool:
        """Whether the release carries noisy counts paid for by this stage itself."""
        return False

    def stages(self) -> list[Stage]:
        """This mechanism's entries in the privacy ledger (one, unless it composes several)."""
        return [self.stage("selection")]

    def stage(self, name: str = "selection") -> Stage:
        """This mechanism's entry in the privacy ledger."""
        return Stage(name=name, mechanism=self.registry_name, epsilon=self.epsilon,
                     delta=self.delta, noise=self.noise if self.noise_multiplier else "other",
                     noise_multiplier=self.noise_multiplier,
                     delta_threshold=self.delta_threshold)

    @property
    def delta_threshold(self) -> float:
        """The part of δ that bounds a lone user's items passing the threshold (δ/2 beside a
        Gaussian noise part, all of δ beside a pure one)."""
        return self.delta / 2 if self.noise == "gaussian" else self.delta

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if not isinstance(v, dict))
        return f"{type(self).__name__}({args})"

    # -- pipeline --------------------------------------------------------------------------
    # How a user's weights are formed when they depend on its own bounded row alone (parallel
    # mechanisms, summed where the data lives); None: a sequential policy over all users in
    # keyed order (``_weights``).
    weighting: ClassVar[Weighting | None] = None

    @property
    def bounding(self) -> Bounding:
        """How users are capped: Δ0, uniformly at random or by own frequency (``sampling``)."""
        return Bounding(self.max_items_per_user, Priority.RANDOM if self.sampling == "uniform"
                        else Priority.OWN_COUNT)

    def bounded_sets(self, data: UserData, key: bytes) -> BoundedSets:
        """Each user's bounded item set in keyed order for ``key`` (tests, audits). Private."""
        return data.bounded_rows(check_key(key), self.bounding).bounded

    def _weights(self, bounded: BoundedSets, n_items: int) -> np.ndarray:
        """Pre-noise weight of every item id (float64, length n_items)."""
        if self.weighting is None:
            raise NotImplementedError
        return user_weights(bounded, n_items, self.weighting)

    def _candidates(self, bounded: BoundedSets, weights: np.ndarray) -> np.ndarray:
        if self.support is Support.CAPPED:
            mask = np.zeros(weights.size, dtype=bool)
            mask[bounded.items] = True
            return np.flatnonzero(mask)
        return np.flatnonzero(weights > 0)

    def _histogram(self, data: UserData, key: bytes) -> ItemWeights:
        """Candidates and weights in canonical order (by item hash), whatever the backend."""
        if self.weighting is not None and self.support is Support.POSITIVE:
            return data.weight_sums(key, self.bounding, self.weighting).canonical()
        rows = data.bounded_rows(key, self.bounding)
        weights = self._weights(rows.bounded, rows.n_items)
        cand = self._candidates(rows.bounded, weights)
        cand = cand[canonical_order(rows.hashes[cand])]   # before the names: one list, in order
        return ItemWeights(NamesOf(rows.names_of, cand), rows.hashes[cand], weights[cand])

    def histogram(self, itemsets, key: bytes) -> dict[str, float]:
        """Pre-noise weights of the release candidates for the user order fixed by ``key``.

        Deterministic given the key. Private: for tests and audits, never for output.
        """
        h = self._histogram(itemsets, check_key(key))
        return dict(zip(h.names, h.weights.tolist()))

    def release_probability(self, weights: np.ndarray) -> np.ndarray:
        """P(candidate with weight w is released), in closed form."""
        if self.noise == "laplace":
            return laplace_release_probability(weights, self.threshold, self.noise_scale)
        return gaussian_release_probability(weights, self.threshold, self.noise_scale)

    def for_data(self: M, data) -> M:
        """This mechanism for ``data``, from public facts the data carries (the joiner of its
        n-grams, for ``dpne_public``): itself for most mechanisms."""
        return self

    @final
    def release(self, data, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        """Run the mechanism. ``key`` fixes the user order and bounding (fresh if None).

        The one release path of every mechanism: the randomness and the key, then the
        mechanism's histogram(s) and decisions (``_select``), then the record, built here."""
        m = self.for_data(data)
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        chosen = m._select(data, key, random)
        return Release(
            items=sorted(chosen.items), mechanism=m.registry_name,
            params=m.params(), epsilon=m.epsilon, delta=m.stage().delta,
            randomness=random.describe(), privacy=m.privacy(), counts=chosen.counts,
            counts_info=m._counts_info() if chosen.counts is not None else None,
            ledger=[s.to_dict() for s in m.stages()], details=chosen.details,
        )

    def _select(self, data: UserData, key: bytes, random: RandomSource) -> Selection:
        """The mechanism's histogram(s) and decisions. Default: one histogram, one decision
        rule (``_decide``); mechanisms of several rounds or levels supply them here."""
        return self._decide(self._histogram(data, key), random)

    def _decide(self, h: ItemWeights, random: RandomSource) -> Selection:
        """The decision rule over one histogram. Default: set-only, each candidate released
        iff H + noise > ρ, drawn as an exact Bernoulli of its release probability."""
        keep = bernoulli(self.release_probability(h.weights), random)
        return Selection(h.names_at(np.flatnonzero(keep)))

    def _counts_info(self) -> dict:
        return {}
