"""Count thresholding with a per-user cap Δ0 (Korolova et al. 2009; Wilson et al. 2020; §1)."""

from __future__ import annotations


import numpy as np

from ..privacy import calibrate
from .base import Bounded, Mechanism


def _user_counts(bounded: Bounded, n_items: int) -> np.ndarray:
    return np.bincount(bounded.items, minlength=n_items).astype(np.float64)


class CountLaplace(Mechanism):
    """Count-Laplace. Privacy claim (add/remove one user X):

    - update: H[u] += 1 for u in S_i (|S_i| ≤ Δ0), so H(D) − H(D') = 1_{S_X}: L1 ≤ Δ0;
    - noise: Lap(b), b = Δ0/ε  ⇒ ε-DP on the common support;
    - threshold: ρ = 1 + b·ln(1/(2δ_Δ0)), δ_Δ0 = 1 − (1−δ)^{1/Δ0}: X's ≤ Δ0 unique items
      (count 1 each) all stay below ρ except with probability ≤ δ;
    - guarantee: (ε, δ)-DP.
    """

    name = "count_laplace"
    summary = "user counts with per-user cap Δ0, Laplace noise"
    noise = "laplace"
    sensitivity = "H(D) - H(D') = indicator of S_X: L1 <= Δ0, L2 <= sqrt(Δ0), Linf <= 1"

    def _calibrate(self):
        b, rho = calibrate.count_laplace(self.epsilon, self.delta, self.max_items_per_user)
        self._set("noise_scale", b)
        self._set("threshold", rho)

    def _weights(self, bounded, n_items):
        return _user_counts(bounded, n_items)


class CountGaussian(Mechanism):
    """Count-Gaussian. Privacy claim:

    - sensitivity as Count-Laplace: L2 ≤ √Δ0;
    - noise: N(0, σ²), σ = σ_AGM(ε, δ/2; √Δ0) (analytic Gaussian) ⇒ (ε, δ/2) on the common support;
    - threshold: ρ = 1 − σ·Φ⁻¹(δ_Δ0(δ/2)): X's unique items stay below ρ w.p. ≥ 1 − δ/2;
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "count_gaussian"
    summary = "user counts with per-user cap Δ0, analytic Gaussian noise"
    noise = "gaussian"
    sensitivity = "H(D) - H(D') = indicator of S_X: L2 <= sqrt(Δ0)"

    def _calibrate(self):
        sigma, rho = calibrate.count_gaussian(self.epsilon, self.delta, self.max_items_per_user)
        self._set("noise_scale", sigma)
        self._set("threshold", rho)

    def _weights(self, bounded, n_items):
        return _user_counts(bounded, n_items)


__all__ = ["CountGaussian", "CountLaplace"]
