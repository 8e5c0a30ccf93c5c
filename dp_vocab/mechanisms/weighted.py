"""Weighted histograms (Gopi et al. 2020): each user spreads a unit of mass evenly.

Proof: weighted.md (beside this module).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bounding import Weighting
from ..privacy import calibrate
from .base import Mechanism
from .claim import Noise


@dataclass(frozen=True, kw_only=True, repr=False)
class WeightedLaplace(Mechanism):
    """Weighted Laplace. Privacy claim:

    - update: H[u] += 1/|S_i| for u in S_i ⇒ ‖H(D) − H(D')‖₁ = 1 (only S_X changes);
    - noise: Lap(1/ε) ⇒ ε-DP on the common support;
    - threshold: ρ = max_{1≤t≤Δ0} [1/t − (1/ε)·ln(2δ_t(δ))] (X's t unique items weigh 1/t);
    - guarantee: (ε, δ)-DP.
    """

    name = "weighted_laplace"
    weighting = Weighting.L1
    summary = "each user spreads weight 1 over its items (L1), Laplace noise"
    noise = Noise.LAPLACE
    calibration = staticmethod(calibrate.policy_laplace)  # ρ as Policy Laplace's: weights 1/t


@dataclass(frozen=True, kw_only=True, repr=False)
class WeightedGaussian(Mechanism):
    """Weighted Gaussian. Privacy claim:

    - update: H[u] += 1/√|S_i| for u in S_i ⇒ ‖H(D) − H(D')‖₂ = 1;
    - noise: N(0, σ²), σ = σ_AGM(ε, δ/2; 1);
    - threshold: ρ = max_{1≤t≤Δ0} [1/√t − σ·Φ⁻¹(δ_t(δ/2))];
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "weighted_gaussian"
    weighting = Weighting.L2
    summary = "each user spreads L2 norm 1 over its items, Gaussian noise"
    noise = Noise.GAUSSIAN
    calibration = staticmethod(calibrate.policy_gaussian)  # weights 1/√t, as Policy Gaussian

