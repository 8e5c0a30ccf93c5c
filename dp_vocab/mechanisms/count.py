"""Count thresholding with a per-user cap Δ0 (Korolova et al. 2009; Wilson et al. 2020).

Proof: count.md (beside this module).
"""

from __future__ import annotations


import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..bounding import Weighting
from ..privacy import calibrate
from ..privacy.accounting import Stage
from ..privacy.noise import discrete_laplace, discrete_laplace_q
from ..privacy.params import check_bool
from .base import Mechanism, Selection
from .claim import Noise, Norm, Sensitivity


@dataclass(frozen=True, kw_only=True, repr=False)
class CountLaplace(Mechanism):
    """Count-Laplace. Privacy claim (add/remove one user X):

    - update: H[u] += 1 for u in S_i (|S_i| ≤ Δ0), so H(D) − H(D') = 1_{S_X}: L1 ≤ Δ0;
    - noise: Lap(b), b = Δ0/ε  ⇒ ε-DP on the common support;
    - threshold: ρ = 1 + b·ln(1/(2δ_Δ0)), δ_Δ0 = 1 − (1−δ)^{1/Δ0}: X's ≤ Δ0 unique items
      (count 1 each) all stay below ρ except with probability ≤ δ;
    - guarantee: (ε, δ)-DP.

    With ``noisy_counts = True`` the noisy counts of released items are published at no extra
    cost (count.md §3-4): the noise is exact discrete Laplace, P(Z=z) ∝ q^|z|, q = e^{−ε/Δ0} (ε-DP for
    integer counts with L1 ≤ Δ0), and ρ is the smallest integer with q^ρ/(1+q) ≤ δ_Δ0, so X's
    count-1 items exceed it (1 + Z > ρ ⟺ Z ≥ ρ) with probability ≤ δ in all.
    """

    name = "count_laplace"
    weighting = Weighting.COUNT
    summary = "user counts with per-user cap Δ0, Laplace noise"
    noise = Noise.LAPLACE

    noisy_counts: bool = False

    def _validate(self) -> None:
        super()._validate()
        self._set("noisy_counts", check_bool(self.noisy_counts, "noisy_counts"))

    def _calibrate(self):
        if self.noisy_counts:
            # b rounded up, δ_Δ0 down; q is the q the sampler draws with (noise.discrete_laplace)
            b = calibrate.round_up(self.max_items_per_user / self.epsilon)
            q = discrete_laplace_q(b)
            d = calibrate.round_down(float(calibrate.delta_k(self.delta,
                                                             self.max_items_per_user)))
            rho = max(1, math.ceil(math.log(d * (1 + q)) / math.log(q)))
            while rho * math.log(q) - math.log1p(q) > math.log(d):   # ceil's rounding, if off
                rho += 1
        else:
            b, rho = calibrate.count_laplace(self.epsilon, self.delta, self.max_items_per_user)
        self._set("noise_scale", b)
        self._set("threshold", float(rho))

    @property
    def noise_multiplier(self):
        return self.noise_scale / self.max_items_per_user  # L1 sensitivity Δ0

    def params(self):
        return {**super().params(), "noisy_counts": self.noisy_counts}

    @property
    def publishes_counts(self) -> bool:
        return self.noisy_counts

    def stage(self, name: str = "selection") -> Stage:
        st = super().stage(name)
        if not self.noisy_counts:
            return st
        # the published noise is discrete Laplace: its own accounting event, sensitivity Δ0
        return dataclasses.replace(st, noise="discrete_laplace",
                                   sensitivity=self.max_items_per_user)

    def release_probability(self, weights):
        if not self.noisy_counts:
            return super().release_probability(weights)
        q = discrete_laplace_q(self.noise_scale)
        m = self.threshold - np.asarray(weights, dtype=np.float64) + 1  # need Z ≥ m
        return np.where(m >= 1, q ** np.maximum(m, 1) / (1 + q),
                        1 - q ** np.maximum(1 - m, 1) / (1 + q))

    def _decide(self, h, random):
        if not self.noisy_counts:
            return super()._decide(h, random)
        noisy = np.rint(h.weights).astype(np.int64) + discrete_laplace(self.noise_scale,
                                                                        h.weights.size, random)
        keep = noisy > self.threshold
        released = h.names_at(np.flatnonzero(keep))
        return Selection(released, counts=dict(zip(released, noisy[keep].tolist())))

    def _counts_info(self):
        return {"route": "thresholding noise published (free)", "noise": "discrete_laplace",
                "scale": self.noise_scale, "value": "number of users holding the item (each "
                "user's ≤ Δ0 items), plus noise"}


@dataclass(frozen=True, kw_only=True, repr=False)
class CountGaussian(Mechanism):
    """Count-Gaussian. Privacy claim:

    - sensitivity as Count-Laplace: L2 ≤ √Δ0;
    - noise: N(0, σ²), σ = σ_AGM(ε, δ/2; √Δ0) (analytic Gaussian) ⇒ (ε, δ/2) on the common support;
    - threshold: ρ = 1 − σ·Φ⁻¹(δ_Δ0(δ/2)): X's unique items stay below ρ w.p. ≥ 1 − δ/2;
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "count_gaussian"
    weighting = Weighting.COUNT
    summary = "user counts with per-user cap Δ0, analytic Gaussian noise"
    noise = Noise.GAUSSIAN

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L2, math.sqrt(self.max_items_per_user), monotone=True,
                           lone_item_power=0.0, exact=True,
                           text="H(D) - H(D') = indicator of S_X: L2 <= sqrt(Δ0)")

    @property
    def noise_multiplier(self):
        return self.noise_scale / math.sqrt(self.max_items_per_user)  # L2 sensitivity √Δ0

    calibration = staticmethod(calibrate.count_gaussian)


__all__ = ["CountGaussian", "CountLaplace"]
