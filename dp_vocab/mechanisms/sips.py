"""DP-SIPS (Swanberg, Desfontaines, Haney 2023; §6): iterated Weighted Gaussian rounds with a
geometrically increasing budget, each round removing the items already released."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError
from ..itemsets import ItemSets
from ..privacy import calibrate
from ..privacy.noise import RandomSource, bernoulli, gaussian_release_probability
from ..privacy.params import check_positive_int
from ..release import Release
from ..itemsets import item_hashes
from .base import Mechanism, bound_itemsets, spread_weights
from .user_order import check_key, derive_key


class DPSIPS(Mechanism):
    """DP-SIPS. Privacy claim:

    - calibration: σ = σ_AGM(ε, δ/2; 1), μ² = 1/σ²; round r gets the fraction
      f_r = a^{R−r}/Σ_j a^{R−j} (increasing): μ_r² = f_r μ², δ_r = f_r·δ/2;
    - round r is a Weighted Gaussian over the items not yet released (each user ≤ Δ0 of them,
      weight 1/√k): L2 sensitivity 1 given the earlier rounds' outputs; threshold
      τ_r = max_{1≤t≤Δ0} [1/√t − σ_r Φ⁻¹(δ_t(δ_r))];
    - rounds compose adaptively; Gaussian parts exactly in GDP (Σ μ_r² = μ²) ⇒ (ε, δ/2);
      thresholds by the union bound Σ δ_r = δ/2; guarantee (ε, δ)-DP.
    """

    name = "dp_sips"
    summary = "DP-SIPS: R weighted-Gaussian rounds, geometric budget, released items removed"
    noise = "gaussian"
    sensitivity = "per round: L2 = 1 (weights 1/sqrt(k) on the user's remaining items)"

    def __init__(self, epsilon, delta, max_items_per_user=100, rounds=3, allocation=0.3,
                 sampling="uniform"):
        self._set("rounds", check_positive_int(rounds, "rounds", maximum=64))
        if not (isinstance(allocation, (int, float)) and 0 < allocation <= 1):
            raise ParameterError("allocation", allocation, "a number in (0, 1]")
        self._set("allocation", float(allocation))
        super().__init__(epsilon, delta, max_items_per_user, sampling)

    def _calibrate(self):
        R, a = self.rounds, self.allocation
        raw = [a ** (R - r) for r in range(1, R + 1)]
        fractions = [x / sum(raw) for x in raw]
        sigma = calibrate.agm_sigma(self.epsilon, self.delta / 2)
        sigmas = [sigma / math.sqrt(f) for f in fractions]
        deltas = [f * self.delta / 2 for f in fractions]
        taus = [calibrate.gaussian_threshold(s, d, self.max_items_per_user)
                for s, d in zip(sigmas, deltas)]
        self._set("sigma", sigma)
        self._set("fractions", tuple(fractions))
        self._set("round_sigmas", tuple(sigmas))
        self._set("round_deltas", tuple(deltas))
        self._set("round_thresholds", tuple(taus))
        self._set("noise_scale", sigmas[0])
        self._set("threshold", taus[0])

    @property
    def noise_multiplier(self):
        return self.sigma

    def params(self):
        return {**super().params(), "rounds": self.rounds, "allocation": self.allocation}

    def privacy(self):
        return {**super().privacy(), "composed_sigma": self.sigma,
                "rounds": [{"fraction": f, "sigma": s, "delta_threshold": d, "threshold": t}
                           for f, s, d, t in zip(self.fractions, self.round_sigmas,
                                                 self.round_deltas, self.round_thresholds)]}

    def _round_key(self, key: bytes, r: int) -> bytes:
        return derive_key(key, b"sips-round" + r.to_bytes(2, "big"))

    def bound(self, itemsets: ItemSets, key: bytes, r: int = 1):
        """Round r's bounded sets (of the items still in ``itemsets``)."""
        return bound_itemsets(itemsets, self._round_key(key, r), self.max_items_per_user,
                              mode=0 if self.sampling == "uniform" else 1)

    def _round(self, data, removed: set, key: bytes, r: int) -> tuple[list[str], np.ndarray]:
        """Round r's candidates (items not yet released) and weights, canonical order."""
        mode = 0 if self.sampling == "uniform" else 1
        if isinstance(data, ItemSets):
            keep = np.ones(len(data.vocab), dtype=bool)
            for w in removed:
                keep[data.vocab.id(w)] = False
            w = spread_weights(self.bound(data.restrict_items(keep), key, r), len(data.vocab), 0.5)
            cand = np.flatnonzero(w > 0)
            names, w, hashes = [data.vocab[int(i)] for i in cand], w[cand], data.vocab.hashes()[cand]
        else:
            names, w = data.spread_sums(self._round_key(key, r),
                                        (self.max_items_per_user, mode, False, None),
                                        ("spread", 0.5), exclude=frozenset(removed))
            hashes = item_hashes(names)
        order = np.argsort(hashes, kind="stable")
        return [names[i] for i in order.tolist()], np.asarray(w)[order]

    def round_histogram(self, itemsets: ItemSets, key: bytes, r: int = 1,
                        released_before=()) -> dict[str, float]:
        """Pre-noise weights of round r given the items released in earlier rounds."""
        removed = {w for w in released_before if w in itemsets.vocab}
        names, w = self._round(itemsets, removed, check_key(key), r)
        return dict(zip(names, w.tolist()))

    def _histogram_strings(self, data, key):
        return self._round(data, set(), key, 1)

    def release(self, itemsets, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        removed: set = set()
        per_round = []
        for r in range(1, self.rounds + 1):
            names, w = self._round(itemsets, removed, key, r)
            keep = bernoulli(gaussian_release_probability(
                w, self.round_thresholds[r - 1], self.round_sigmas[r - 1]), random)
            released = [n for n, k in zip(names, keep.tolist()) if k]
            removed.update(released)
            per_round.append({"round": r, "released": len(released)})
        return Release(items=sorted(removed),
                       mechanism=self.registry_name, params=self.params(),
                       epsilon=self.epsilon, delta=self.delta, randomness=random.describe(),
                       privacy=self.privacy(), ledger=[self.stage().to_dict()],
                       details={"rounds": per_round})
