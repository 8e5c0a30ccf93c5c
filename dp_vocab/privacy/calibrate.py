"""Noise scales and release thresholds (derivations: section 3 of each
mechanisms/*.md proof; golden values: tests/test_calibrate.py).

All functions are pure and deterministic; they never see private data.

Rounding (mechanisms/README.md §7): every noise scale and threshold returned here is rounded up,
and every δ share down, by at least ``MARGIN`` relative (``round_up`` / ``round_down``). A few
floating-point operations stand behind each value, each off by at most half an ulp, and a release
probability computed from them is off by a few ulps more; 2^-45 is 256 ulps, so the rounded value
errs on the safe side whatever those errors are, and moves a result by far less than any release
could show. tests/test_rounding.py checks the outcome in 80-digit arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..errors import ParameterError
from .params import check_positive_int, check_real


MARGIN = 2.0 ** -45


def round_up(x: float) -> float:
    """``x`` raised by at least MARGIN·|x| (and by at least one ulp)."""
    return math.nextafter(x + abs(x) * MARGIN, math.inf)


def round_down(x: float) -> float:
    """``x`` lowered by at least MARGIN·|x| (and by at least one ulp, not below 0)."""
    return max(math.nextafter(x - abs(x) * MARGIN, -math.inf), 0.0)


def delta_k(delta: float, k: int | np.ndarray) -> float | np.ndarray:
    """δ_k(δ) = 1 − (1−δ)^{1/k}, evaluated without cancellation (Google ``CalculateAdjustedDelta``).

    If each of k independent events has probability ≤ δ_k, none happens with probability ≥ 1−δ.
    """
    return -np.expm1(np.log1p(-delta) / k)


_EVAL_SLACK = 2.0 ** -48   # of the magnitudes behind log δ(σ): see _log_agm_delta


def _log_agm_delta(sigma: float, epsilon: float, sensitivity: float,
                   upper: bool = False) -> float:
    """log δ(σ) for the Gaussian mechanism (Balle & Wang 2018, Thm 8), in log space.

    ``upper``: a value at least the exact one. δ = Φ(a)(1 − e^inner), inner = ε + log Φ(b) −
    log Φ(a) < 0; log Φ(a) is raised and inner lowered by 2^-48 of the magnitudes they are
    computed from (log_ndtr's error and that of a, b and the sum are a few ulps of those), which
    can only raise δ. With large ε, inner is close to 0 and δ loses digits to cancellation: this
    bound is what keeps the calibrated σ safe there."""
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    la, lb = float(log_ndtr(a)), float(log_ndtr(b))
    inner = epsilon + lb - la
    if upper:
        slack = _EVAL_SLACK * (epsilon + abs(la) + abs(lb) + a * a + b * b + 1.0)
        la, inner = la + slack, inner - slack
    if inner >= 0:  # δ(σ) underflows to ≤ 0: the target certainly holds
        return -math.inf
    return la + math.log(-math.expm1(inner))


def agm_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ of the Gaussian mechanism with std σ and L2 sensitivity Δ at ε."""
    return math.exp(_log_agm_delta(sigma, epsilon, sensitivity))


def agm_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ (to relative 1e-13, rounded up) with δ(σ) ≤ δ: the analytic Gaussian mechanism.

    Relative bisection on log σ that returns the upper bracket, so the target always holds
    (the Balle-Wang reference code stops on an absolute tolerance and can overshoot δ;
    mechanisms/README.md §4). Rounded up twice: the bisection tests an upper bound of δ(σ)
    (``_log_agm_delta(upper=True)``), and the bracket's end is raised by MARGIN."""
    epsilon = check_real(epsilon, "epsilon", 0.0, 1e3, low_open=True)
    delta = check_real(delta, "delta", 0.0, 1.0 - 1e-12, low_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", 0.0, 1e12, low_open=True)
    target = math.log(delta)
    hi = float(sensitivity)
    while _log_agm_delta(hi, epsilon, sensitivity, upper=True) > target:
        hi *= 2.0
    lo = hi / 2.0
    while _log_agm_delta(lo, epsilon, sensitivity, upper=True) <= target:
        lo /= 2.0
    while hi / lo - 1.0 >= 1e-13:
        mid = math.sqrt(lo * hi)
        if _log_agm_delta(mid, epsilon, sensitivity, upper=True) <= target:
            hi = mid
        else:
            lo = mid
    return round_up(hi)


# ---- Count thresholding (count.md) ------------------------------------------------------------

def count_laplace(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """(b, ρ) for Count-Laplace: b = Δ0/ε, ρ = 1 + (Δ0/ε)·ln(1/(2 δ_Δ0(δ))), both rounded up."""
    b = round_up(max_items / epsilon)
    rho = 1.0 - b * math.log(2.0 * float(delta_k(delta, max_items)))
    return b, round_up(rho)


def count_gaussian(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """(σ, ρ) for Count-Gaussian: σ = σ_AGM(ε, δ/2; √Δ0), ρ = 1 − σ·Φ⁻¹(δ_Δ0(δ/2)), ρ rounded
    up (σ is, by agm_sigma)."""
    sigma = agm_sigma(epsilon, delta / 2.0, math.sqrt(max_items))
    rho = 1.0 - sigma * float(ndtri(delta_k(delta / 2.0, max_items)))
    return sigma, round_up(rho)


# ---- Weighted / policy thresholds (weighted.md, policy.md) ----------------------------------------------

def policy_laplace(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """(b, ρ): b = 1/ε, ρ = max_{1≤t≤Δ0} [1/t − b·ln(2 δ_t(δ))], b rounded up and ρ computed
    from it (more noise means a higher tail), then rounded up."""
    b = round_up(1.0 / epsilon)
    t = np.arange(1, max_items + 1, dtype=np.float64)
    rho = np.max(1.0 / t - b * np.log(2.0 * delta_k(delta, t)))
    return b, round_up(float(rho))


def policy_gaussian(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """(σ, ρ): σ = σ_AGM(ε, δ/2; 1), ρ = max_{1≤t≤Δ0} [1/√t − σ·Φ⁻¹(δ_t(δ/2))]."""
    sigma = agm_sigma(epsilon, delta / 2.0)
    check_remove_direction(sigma, epsilon, delta / 2.0, delta / 2.0)
    return sigma, gaussian_threshold(sigma, delta / 2.0, max_items)


def remove_direction_delta(sigma: float, epsilon: float, delta_thr: float) -> float:
    """sup_S P[M(D′) ∈ S] − e^ε P[M(D) ∈ S] for a Gaussian part (L2 sensitivity 1, σ) beside
    a threshold part that keeps D's extra items out with probability ≥ 1 − δ_thr: the Gaussian
    hockey-stick divergence at e^ε(1 − δ_thr), i.e. δ_G(ε + ln(1 − δ_thr)) (public.md §4)."""
    return math.exp(_log_agm_delta(sigma, epsilon + math.log1p(-delta_thr), 1.0))


def check_remove_direction(sigma: float, epsilon: float, delta_noise: float,
                           delta_thr: float) -> None:
    """The remove direction of a Gaussian-plus-threshold claim fits δ_noise + δ_thr.

    mechanisms/README.md §5 proves it always does (δ_G(ε + ln(1 − c)) ≤ δ_G(ε) + c); this
    evaluates it for the calibrated σ so that a calibration error cannot pass unnoticed."""
    found = remove_direction_delta(sigma, epsilon, delta_thr)
    if not found <= (delta_noise + delta_thr) * (1 + 1e-9):
        raise ParameterError("delta", delta_noise + delta_thr,
                             f"a split whose remove direction fits it (σ = {sigma:.6g} gives "
                             f"{found:.3g})", "Report this: the calibration is inconsistent.")


def gaussian_threshold(sigma: float, delta_thr: float, max_items: int) -> float:
    """max_{1≤t≤Δ0} [1/√t − σ·Φ⁻¹(δ_t(δ_thr))], rounded up: a user's t unique items at weight
    1/√t are all kept below the threshold except with probability δ_thr (weighted.md §3, also
    DP-SIPS rounds)."""
    t = np.arange(1, max_items + 1, dtype=np.float64)
    return round_up(float(np.max(1.0 / np.sqrt(t) - sigma * ndtri(delta_k(delta_thr, t)))))


# ---- Repaired GW (greedy.md §3) -----------------------------------------------------------------

def _gw_log_keep(rho: float, b: float, max_items: int) -> float:
    """log P(none of X's capped unique items is released): one at weight ≤ 1, Δ0−1 at 0."""
    return (math.log1p(-0.5 * math.exp(-(rho - 1.0) / b))
            + (max_items - 1) * math.log1p(-0.5 * math.exp(-rho / b)))


def gw_repaired(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """(b, ρ) for GW-Δ0: b = 1/ε (rounded up) and the smallest ρ (bisection to relative 1e-14,
    upper end, then rounded up) with 1 − (1 − ½e^{−(ρ−1)/b})·(1 − ½e^{−ρ/b})^{Δ0−1} ≤ δ."""
    b = round_up(1.0 / epsilon)
    target = math.log1p(-delta)
    lo, hi = 1.0, 1.0 - b * math.log(2.0 * delta) + 1.0
    while _gw_log_keep(hi, b, max_items) < target:
        hi += (hi - lo)
    while hi - lo > 1e-14 * hi:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _gw_log_keep(mid, b, max_items) >= target:
            hi = mid
        else:
            lo = mid
    return b, round_up(hi)


# ---- Optimal partition selection (partition.md) ---------------------------------------------------

def partition_budget(epsilon: float, delta: float, max_items: int) -> tuple[float, float]:
    """Per-partition (ε_p, δ_p) = (ε/Δ0, 1 − (1−δ)^{1/Δ0}) for users touching ≤ Δ0 partitions,
    both rounded down (π*(1) = δ_p is a lone item's release probability)."""
    return round_down(epsilon / max_items), round_down(float(delta_k(delta, max_items)))


def pi_star_constants(epsilon: float, delta: float) -> tuple[float, int, int]:
    """(L, n1, n2) of the optimal primitive π* (Desfontaines et al. 2022, closed form)."""
    L = math.log1p(math.tanh(epsilon / 2.0) * (1.0 / delta - 1.0)) / epsilon
    n1 = 1 + math.floor(L)
    p1 = delta * math.expm1(n1 * epsilon) / math.expm1(epsilon)
    n2 = n1 + math.floor(math.log1p(math.expm1(epsilon) * (1.0 - p1) / delta) / epsilon)
    return L, n1, n2


def pi_star(n: np.ndarray | int, epsilon: float, delta: float) -> np.ndarray:
    """π*(n): the largest keep-probability of a partition with n users under (ε, δ)-DP.

    π*(0)=0, π*(n) = min(e^ε π*(n−1) + δ, 1 − e^{−ε}(1 − π*(n−1) − δ), 1), in closed form.
    """
    n = np.asarray(n, dtype=np.float64)
    L, n1, n2 = pi_star_constants(epsilon, delta)
    em1 = math.expm1(epsilon)
    p1 = delta * math.expm1(n1 * epsilon) / em1
    low = delta * np.expm1(np.minimum(n, n1) * epsilon) / em1
    d = np.maximum(n - n1, 0.0)
    mid = 1.0 - np.exp(-d * epsilon) * (1.0 - p1) + delta * (-np.expm1(-d * epsilon)) / em1
    out = np.where(n <= n1, low, np.minimum(mid, 1.0))
    out = np.where(n > n2, 1.0, out)
    return np.where(n <= 0, 0.0, out)


def pi_star_recursive(n_max: int, epsilon: float, delta: float) -> np.ndarray:
    """π*(0..n_max) by the defining recursion (test oracle for :func:`pi_star`)."""
    out = np.zeros(n_max + 1)
    for n in range(1, n_max + 1):
        prev = out[n - 1]
        out[n] = min(math.exp(epsilon) * prev + delta,
                     1.0 - math.exp(-epsilon) * (1.0 - prev - delta), 1.0)
    return out


def tsgd_threshold(epsilon: float, delta: float) -> int:
    """k = ⌈L⌉: release iff n + Z > k for k-truncated symmetric geometric noise Z (partition.md)."""
    L, _, _ = pi_star_constants(epsilon, delta)
    return math.ceil(L)


__all__ = [
    "MARGIN", "agm_delta", "agm_sigma", "round_down", "round_up", "check_remove_direction", "count_gaussian", "count_laplace", "delta_k", "gaussian_threshold",
    "gw_repaired", "partition_budget", "pi_star", "pi_star_constants", "pi_star_recursive",
    "policy_gaussian", "policy_laplace", "remove_direction_delta", "tsgd_threshold", "check_positive_int",
]
