"""The privacy ledger: every stage that reads private data, and the run's total.
Proof: mechanisms/README.md §6.

Each stage is (ε_i, δ_i)-DP and splits as a noise part (pure Laplace, Gaussian, or zCDP) plus a
thresholding failure probability δ_thr,i. Up to three valid totals are computed and the smallest
ε is used:

- basic composition: (Σ ε_i, Σ δ_i);
- PLD: the noise parts composed by the PLD accountant of ``dp-accounting`` at
  δ_noise = Σ (δ_i − δ_thr,i), plus Σ δ_thr,i added by the union bound over the bad events.
  Used only when every stage's noise part is a Laplace, discrete Laplace or Gaussian mechanism
  (``Stage.pld`` says how each is represented);
- zCDP: the noise parts' ρ_i summed (a Gaussian of multiplier m is 1/(2m²)-zCDP), converted to
  ε at the same δ_noise, plus Σ δ_thr,i. Used only when every noise part is Gaussian or zCDP
  (discrete Gaussian counts beside a Gaussian selection).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

from ..errors import BudgetExceededError


@dataclass(frozen=True)
class Stage:
    """One release from private data.

    ``noise``: laplace | discrete_laplace | gaussian | zcdp | other. ``noise_multiplier`` is
    scale / sensitivity (Laplace b/Δ1, Gaussian σ/Δ2); ``sensitivity`` the integer L1
    sensitivity of a discrete Laplace stage (recorded; its PLD is the worst-case ε-DP pair of
    ε = 1/multiplier, which dominates it whatever the sensitivity);
    ``rho`` the zCDP parameter for zcdp stages; ``delta_threshold`` the part of δ spent on the
    support.
    """

    name: str
    mechanism: str
    epsilon: float
    delta: float
    noise: str = "other"
    noise_multiplier: float | None = None
    delta_threshold: float = 0.0
    rho: float | None = None
    sensitivity: int | None = None

    def __post_init__(self):
        if self.noise == "discrete_laplace" and (self.sensitivity is None or
                                                 self.noise_multiplier is None):
            raise ValueError("a discrete_laplace stage needs noise_multiplier and sensitivity")

    def pld(self, interval: float):
        """The stage's noise part as a privacy loss distribution (``dp-accounting``).

        Gaussian: the exact PLD of N(0, σ²) with sensitivity 1 in units of σ/Δ2 (rotation
        invariance makes any direction of the shift equivalent). Laplace and discrete Laplace:
        the noise part is ε-DP with ε = 1/noise_multiplier, and the worst-case PLD of any ε-DP
        mechanism (Kairouz, Oh, Viswanath 2015) dominates it whatever the shape of the shift
        over coordinates. (Treating such a stage as one coordinate of continuous Laplace noise
        would undercount: Gaussian σ(1, 1e-5) plus an ε = 1 count release composes to 1.9806,
        not 1.9585.)"""
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld
        multiplier = self.noise_multiplier
        if multiplier is None or self.noise not in _PLD_NOISES:
            raise ValueError(f"stage {self.name}: no additive noise part to account")
        if self.noise == "gaussian":
            return pld.from_gaussian_mechanism(multiplier, value_discretization_interval=interval)
        return pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(1.0 / multiplier, 0.0),
            value_discretization_interval=interval)

    def zcdp(self) -> float:
        """The stage's noise part as ρ-zCDP: its own ρ, or 1/(2m²) for a Gaussian of noise
        multiplier m (Bun & Steinke 2016, Prop. 1.6)."""
        if self.noise == "zcdp" and self.rho is not None:
            return self.rho
        if self.noise == "gaussian" and self.noise_multiplier is not None:
            return 1.0 / (2.0 * self.noise_multiplier ** 2)
        raise ValueError(f"stage {self.name}: its noise part is not zCDP")

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP mechanism at δ (Canonne-Kamath-Steinke 2020, Prop. 12; as dp-accounting):
    min over α > 1 of αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)."""
    from scipy.optimize import minimize_scalar
    if rho <= 0:
        return 0.0

    def f(log_am1):
        a = 1.0 + math.exp(log_am1)
        return a * rho + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0)

    res = minimize_scalar(f, bounds=(-12.0, 12.0), method="bounded",
                          options={"xatol": 1e-10})
    # never report more than the simple BS16 bound ρ + 2√(ρ ln(1/δ))
    return float(min(res.fun, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """Largest ρ whose zCDP → (ε, δ) conversion gives at most ε (root of the monotone
    conversion, then stepped down until it holds)."""
    from scipy.optimize import brentq
    hi = epsilon
    while zcdp_epsilon(hi, delta) < epsilon:
        hi *= 2.0
    rho = float(brentq(lambda r: zcdp_epsilon(r, delta) - epsilon, 0.0, hi,
                       xtol=1e-300, rtol=1e-13, maxiter=200))
    while rho > 0 and zcdp_epsilon(rho, delta) > epsilon:
        rho *= 1.0 - 1e-13
    return rho


_PLD_NOISES = ("laplace", "discrete_laplace", "gaussian")
_ZCDP_NOISES = ("gaussian", "zcdp")


class Ledger:
    """An ordered list of stages and their composition."""

    def __init__(self, stages: list[Stage] | None = None):
        self.stages: list[Stage] = list(stages or [])

    def add(self, stage: Stage) -> None:
        self.stages.append(stage)

    def basic(self) -> tuple[float, float]:
        return (sum(s.epsilon for s in self.stages), sum(s.delta for s in self.stages))

    def tight(self) -> tuple[float, float] | None:
        """(ε, δ) from the PLD accountant on the noise parts + Σ δ_thr, or None if some stage's
        noise part is not a Laplace/Gaussian mechanism."""
        if not self.stages or any(s.noise not in _PLD_NOISES or s.noise_multiplier is None
                                  for s in self.stages):
            return None
        delta_thr = sum(s.delta_threshold for s in self.stages)
        delta_noise = sum(s.delta - s.delta_threshold for s in self.stages)
        if all(s.noise in ("laplace", "discrete_laplace") for s in self.stages):
            return self.basic()[0], delta_thr + delta_noise  # pure: the basic sum is exact
        total = self.stages[0].pld(1e-4)
        for s in self.stages[1:]:
            total = total.compose(s.pld(1e-4))
        return float(total.get_epsilon_for_delta(delta_noise)), delta_thr + delta_noise

    def zcdp(self) -> tuple[float, float] | None:
        """(ε, δ) from the noise parts' summed ρ (zCDP composes adaptively, Bun & Steinke 2016,
        Lemma 2.3) converted at δ_noise, plus Σ δ_thr; None if some stage's noise part is not
        Gaussian or zCDP."""
        if not self.stages or any(s.noise not in _ZCDP_NOISES for s in self.stages):
            return None
        delta_thr = sum(s.delta_threshold for s in self.stages)
        delta_noise = sum(s.delta - s.delta_threshold for s in self.stages)
        if delta_noise <= 0:
            return None
        rho = sum(s.zcdp() for s in self.stages)
        return zcdp_epsilon(rho, delta_noise), delta_thr + delta_noise

    def total(self) -> tuple[float, float, str]:
        """The smaller-ε valid total and how it was obtained. One stage is its own exact
        claim: nothing to compose."""
        return _compose(tuple(self.stages))

    def check(self, epsilon: float, delta: float) -> None:
        eps, d, how = self.total()
        if eps > epsilon * (1 + 1e-9) or d > delta * (1 + 1e-9):
            parts = "; ".join(f"{s.name}: (ε={s.epsilon:g}, δ={s.delta:g})" for s in self.stages)
            raise BudgetExceededError(
                f"budget exceeded: the stages spend (ε={eps:.4g}, δ={d:.3g}) by {how} [{parts}] "
                f"but [budget] allows (ε={epsilon:g}, δ={delta:g}). Lower a stage's epsilon/delta "
                f"or raise budget.epsilon/delta. Nothing was read or written.")

    def to_dict(self) -> dict:
        eps_b, delta_b = self.basic()
        eps, d, how = self.total()
        return {"stages": [s.to_dict() for s in self.stages],
                "basic_composition": {"epsilon": eps_b, "delta": delta_b,
                                      "meaning": "the sum of the stages' (ε, δ): a valid but "
                                                 "looser bound; the run's guarantee is total"},
                "total": {"epsilon": eps, "delta": d, "method": how}}


@functools.lru_cache(maxsize=256)
def _compose(stages: tuple[Stage, ...]) -> tuple[float, float, str]:
    """Ledger.total for a tuple of (frozen) stages; cached since a PLD is slow to build."""
    ledger = Ledger(list(stages))
    eps_b, delta_b = ledger.basic()
    if len(stages) <= 1:
        return eps_b, delta_b, "basic composition"
    best = (eps_b, delta_b, "basic composition")
    for found, how in ((ledger.tight(), "PLD (dp-accounting) on the noise parts + Σ δ_threshold"),
                       (ledger.zcdp(), "zCDP on the noise parts + Σ δ_threshold")):
        if found is not None and found[0] < best[0] and found[1] <= delta_b * (1 + 1e-12):
            best = (found[0], found[1], how)
    return best
