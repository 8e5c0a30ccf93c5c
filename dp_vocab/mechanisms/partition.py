"""Optimal partition selection (Desfontaines, Voss, Gipson, Mandayam, PoPETs 2022).

Proof: partition.md (beside this module).
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass, field

from ..bounding import Weighting
from ..privacy import calibrate
from .base import Mechanism
from .claim import Noise


@dataclass(frozen=True, kw_only=True, repr=False)
class PartitionOptimal(Mechanism):
    """Keep an item held by n users with probability π*(n), the optimal (ε_p, δ_p) primitive.

    Privacy claim:
    - each user touches ≤ Δ0 items (uniform sample, own randomness); the count H[u] of users per
      item changes by ≤ 1 on ≤ Δ0 items when a user is added or removed;
    - per item, keeping with probability π*(n) is (ε_p, δ_p)-DP with ε_p = ε/Δ0,
      δ_p = 1 − (1−δ)^{1/Δ0}; the ≤ Δ0 affected items compose to (ε, δ)-DP.
    - Δ0 = 1 is optimal among all mechanisms (Thm 3); for large Δ0 prefer a Gaussian mechanism.

    ``threshold`` is the equivalent truncated-geometric threshold k = ⌈L⌉ (release iff n+Z > k)
    and ``noise_scale`` is 1/ε_p; decisions use π* exactly, which is never worse than TSGD.
    """

    name = "partition_optimal"
    weighting = Weighting.COUNT
    summary = "optimal keep-probability π*(n) (Desfontaines et al.), best at Δ0 = 1"
    noise = Noise.OPTIMAL
    sampling_modes = ("uniform",)

    max_items_per_user: int = 1
    epsilon_per_item: float = field(init=False)
    delta_per_item: float = field(init=False)

    def _calibrate(self):
        eps_p, delta_p = calibrate.partition_budget(self.epsilon, self.delta,
                                                    self.max_items_per_user)
        self._set("epsilon_per_item", eps_p)
        self._set("delta_per_item", delta_p)
        self._set("threshold", float(calibrate.tsgd_threshold(eps_p, delta_p)))
        self._set("noise_scale", 1.0 / eps_p)

    def privacy(self):
        return {**super().privacy(), "epsilon_per_item": self.epsilon_per_item,
                "delta_per_item": self.delta_per_item,
                "release_decisions": "exact Bernoulli(pi*(n)) per item"}

    def release_probability(self, weights):
        return calibrate.pi_star(np.asarray(weights), self.epsilon_per_item, self.delta_per_item)
