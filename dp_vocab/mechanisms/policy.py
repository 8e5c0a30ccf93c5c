"""Policy Laplace (L1-descent) and Policy Gaussian (L2-descent) (Gopi et al. ICML 2020).
Proof: policy.md (beside this module).

Users are processed one at a time in keyed-hash order; each moves the histogram towards the cutoff
Γ = ρ + α·scale by at most 1 in L1 (resp. L2), spending nothing on items already at Γ.
"""

from __future__ import annotations


from dataclasses import dataclass, field

from ..privacy import calibrate
from ..privacy.params import check_nonnegative
from ..compiled import lazy_module
from .base import Mechanism
from .claim import Noise, Norm, Sensitivity

_kernels = lazy_module("dp_vocab.mechanisms._kernels")   # numba: imported on first use


@dataclass(frozen=True, kw_only=True, repr=False)
class _Policy(Mechanism):
    alpha: float = 3.0
    cutoff: float = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("alpha", check_nonnegative(self.alpha, "alpha"))

    def _calibrate(self):
        super()._calibrate()
        self._set("cutoff", self.threshold + self.alpha * self.noise_scale)

    def params(self):
        return {**super().params(), "alpha": self.alpha}

    def privacy(self):
        return {**super().privacy(), "cutoff": self.cutoff}


@dataclass(frozen=True, kw_only=True, repr=False)
class PolicyLaplace(_Policy):
    """Policy Laplace. Privacy claim (Gopi et al. Lemmas 4.1-4.2, Thm 4.1):

    - update (L1-descent): raise the user's items below Γ by a common λ*, capped at Γ, with total
      increase ≤ 1. The policy is ℓ1-contractive on {H ≤ H'}, so for the same user order
      ‖H(D) − H(D')‖₁ ≤ 1, H(D) ≥ H(D'), and X's t unique items weigh ≤ 1/t;
    - noise: Lap(1/ε);
    - threshold: ρ = max_{1≤t≤Δ0} [1/t − (1/ε)·ln(2δ_t(δ))]; cutoff Γ = ρ + α/ε (α ≥ 0 does
      not affect privacy; default 3);
    - guarantee: (ε, δ)-DP.
    """

    name = "policy_laplace"
    noise = Noise.LAPLACE
    summary = "Gopi et al. L1-descent policy; cutoff Γ = ρ + α/ε"

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L1, 1.0, monotone=True, lone_item_power=1.0, cap=self.cutoff,
                           text="L1 <= 1 and H(D) >= H(D') coordinatewise "
                                "(l1-contractive L1-descent)")


    calibration = staticmethod(calibrate.policy_laplace)

    def _weights(self, bounded, n_items):
        return _kernels.l1_descent(bounded.order, bounded.indptr, bounded.items, n_items,
                                   self.cutoff)


@dataclass(frozen=True, kw_only=True, repr=False)
class PolicyGaussian(_Policy):
    """Policy Gaussian. Privacy claim (Gopi et al. Lemmas 5.1-5.2, Thm 5.1):

    - update (L2-descent): move the user's items below Γ towards Γ·1 by L2 distance ≤ 1.
      ℓ2-contractive, so ‖H(D) − H(D')‖₂ ≤ 1 and X's t unique items weigh ≤ 1/√t;
    - noise: N(0, σ²), σ = σ_AGM(ε, δ/2; 1);
    - threshold: ρ = max_{1≤t≤Δ0} [1/√t − σ·Φ⁻¹(δ_t(δ/2))]; cutoff Γ = ρ + α·σ (default α = 5);
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "policy_gaussian"
    noise = Noise.GAUSSIAN
    summary = "Gopi et al. L2-descent policy; cutoff Γ = ρ + α·σ"

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L2, 1.0, lone_item_power=0.5, cap=self.cutoff,
                           text="L2 <= 1 (l2-contractive L2-descent)")

    alpha: float = 5.0

    calibration = staticmethod(calibrate.policy_gaussian)

    def _weights(self, bounded, n_items):
        return _kernels.l2_descent(bounded.order, bounded.indptr, bounded.items, n_items,
                                   self.cutoff)


__all__ = ["PolicyGaussian", "PolicyLaplace"]
