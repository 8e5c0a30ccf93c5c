"""DP-SIPS (Swanberg, Desfontaines, Haney 2023; proof: sips.md): iterated Weighted Gaussian rounds with a
geometrically increasing budget, each round removing the items already released."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..bounding import BoundedSets, ItemWeights, UserData, Weighting, check_key, derive_key
from ..errors import ParameterError
from ..privacy import calibrate
from ..privacy.noise import RandomSource, bernoulli, gaussian_release_probability
from ..privacy.params import check_positive_int, check_real
from .base import Mechanism, Selection
from .claim import Noise


@dataclass(frozen=True, kw_only=True, repr=False)
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
    noise = Noise.GAUSSIAN
    scope = "per round (given the earlier rounds' output, over the items not yet released): "

    rounds: int = 3
    allocation: float = 0.3
    sigma: float = field(init=False)
    fractions: tuple[float, ...] = field(init=False)
    round_sigmas: tuple[float, ...] = field(init=False)
    round_deltas: tuple[float, ...] = field(init=False)
    round_thresholds: tuple[float, ...] = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("rounds", check_positive_int(self.rounds, "rounds", maximum=64))
        self._set("allocation", check_real(self.allocation, "allocation", 0.0, 1.0,
                                           low_open=True))

    def _calibrate(self):
        R, a = self.rounds, self.allocation
        raw = [a ** (R - r) for r in range(1, R + 1)]
        if raw[0] < 1e-100:   # round 1's δ share, δ_1/Δ0, must stay a normal double
            raise ParameterError("allocation", a, f"a ratio whose power {R - 1} (rounds − 1) is "
                                 "a positive float, e.g. 0.3; or fewer rounds")
        fractions = [x / sum(raw) for x in raw]
        sigma = calibrate.agm_sigma(self.epsilon, self.delta / 2)
        calibrate.check_remove_direction(sigma, self.epsilon, self.delta / 2, self.delta / 2)
        # σ_r up and δ_r down (calibrate.MARGIN): Σ 1/σ_r² ≤ 1/σ², Σ δ_r ≤ δ/2 exactly
        sigmas = [calibrate.round_up(sigma / math.sqrt(f)) for f in fractions]
        deltas = [calibrate.round_down(f * self.delta / 2) for f in fractions]
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

    weighting = Weighting.L2

    def bounded_sets(self, data: UserData, key: bytes, r: int = 1) -> BoundedSets:
        """Round r's bounded sets (tests, audits). Private."""
        return data.bounded_rows(self._round_key(check_key(key), r), self.bounding).bounded

    def _round(self, data: UserData, removed: frozenset, key: bytes, r: int) -> ItemWeights:
        """Round r's candidates (items not yet released) and weights, canonical order."""
        return data.weight_sums(self._round_key(key, r), self.bounding, Weighting.L2,
                                exclude=removed).canonical()

    def round_histogram(self, data: UserData, key: bytes, r: int = 1,
                        released_before=()) -> dict[str, float]:
        """Pre-noise weights of round r given the items released in earlier rounds."""
        h = self._round(data, frozenset(released_before), check_key(key), r)
        return dict(zip(h.names, h.weights.tolist()))

    def _histogram(self, data: UserData, key: bytes) -> ItemWeights:
        return self._round(data, frozenset(), key, 1)

    def _select(self, data: UserData, key: bytes, random: RandomSource) -> Selection:
        """Rounds 1..R, each over the items not yet released."""
        removed: set[str] = set()
        per_round = []
        for r in range(1, self.rounds + 1):
            h = self._round(data, frozenset(removed), key, r)
            released = self._decide_round(h, r, removed, random)
            removed.update(released)
            per_round.append({"round": r, "released": len(released)})
        return Selection(list(removed), details={"rounds": per_round})

    def _decide_round(self, h: ItemWeights, r: int, removed: set[str],
                      random: RandomSource) -> list[str]:
        """Round r's decisions over its candidates (``removed``: the earlier rounds' items):
        H + N(0, σ_r²) > τ_r."""
        keep = bernoulli(gaussian_release_probability(
            h.weights, self.round_thresholds[r - 1], self.round_sigmas[r - 1]), random)
        return h.names_at(np.flatnonzero(keep))
