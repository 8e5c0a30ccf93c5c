"""Benjamini-Hochberg over a DPNE level's public candidate set C_n, drawn exactly (proof:
ngrams.md §3a–§3c). Post-processing of the level's noisy values, so it holds no privacy claim
of its own.

A level n ≥ 2 noises every member of C_n (m = |C_n|, public once S_1..S_{n−1} are): the
candidates some user holds with their weights H > 0, and m0 = m − |supp H| zero-weight ones.
The p-value of g is p_g = Q((H_g + Z_g)/σ). BH releases {g : p_g ≤ c(k*)} with the critical
values (non-decreasing in k)

    c(k) = min(1, min(q·k, Q_n·(k + r))/m)         (Q_n = None: the second term is off)

and, adaptive (Storey, λ), π̂ = (1 + #{g : p_g > λ})/(m(1 − λ)), c̃(k) = min(λ, c(k)/π̂).

- ``level_bh``: the decisions, top-down as ``weighted_bh`` (public.md §3, §9), with the zero-
  weight candidates carried as one count: their p-values are iid uniform, so only how many of
  them fall below each threshold matters (exact Binomial thinning); which ones is a uniform
  subset, drawn by the caller (``CandidateJoin.sample``);
- ``check_level_fdr``, ``total_shares``: the parameters, validated before any data is read.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..errors import ParameterError
from ..privacy.calibrate import round_down
from ..privacy.noise import RandomSource, binomial, binomial_half
from ..privacy.params import check_real
from .weighted_bh import keep_with_log_probability

# λ drawn exactly at any |C_n|: ½ by counting set bits (``noise.binomial_half``); a general λ
# would need Binomial(m0, λ) through ``noise.binomial``, one draw per success (m0 ~ 1e8)
LEVEL_LAMBDAS = (0.5,)
MAX_FDR = 0.5


def check_level_fdr(level_fdr: object, level_lambda: object,
                    total_fdr: object) -> tuple[float | None, float | None, float | None]:
    """``level_fdr`` q, ``level_fdr_lambda`` λ and ``total_fdr`` Q validated: q None (the η rule)
    or in (0, 0.5]; λ None or ½, only with q; Q None or in (0, 0.5], only with q."""
    if level_fdr is not None:
        level_fdr = check_real(level_fdr, "level_fdr", 0.0, MAX_FDR, low_open=True,
                               allowed="null (levels n >= 2 by the eta threshold) or a "
                                       "false-discovery rate in (0, 0.5] per level, e.g. 0.012")
    if level_lambda is not None:
        allowed = "null (plain BH) or 0.5 (Storey-adaptive BH)"
        fix = ("Other values of λ cannot be drawn exactly at the size of a level's candidate "
               "set; use 0.5.")
        lam = check_real(level_lambda, "level_fdr_lambda", 0.0, 1.0, low_open=True,
                         high_open=True, allowed=allowed, fix=fix)
        if lam not in LEVEL_LAMBDAS:
            raise ParameterError("level_fdr_lambda", level_lambda, allowed, fix)
        level_lambda = lam
    if total_fdr is not None:
        total_fdr = check_real(total_fdr, "total_fdr", 0.0, MAX_FDR, low_open=True,
                               allowed="null (no whole-release bound) or a false-discovery "
                                       "rate in (0, 0.5] over the whole release, e.g. 0.01")
    if level_fdr is None:
        for name, value in (("level_fdr_lambda", level_lambda), ("total_fdr", total_fdr)):
            if value is not None:
                raise ParameterError(name, value, "null while level_fdr is null",
                                     "Set level_fdr (e.g. 0.012) to release levels n >= 2 by "
                                     "Benjamini-Hochberg, or leave this null.")
    return level_fdr, level_lambda, total_fdr


def total_shares(total: float, charged: float, levels: int) -> tuple[float, ...]:
    """Q_2..Q_T: what ``total`` leaves after level 1's ``charged``, spent from a running
    remainder, each level an equal part of what is left and the last level the rest. Each part
    and each remainder rounded down, so Σ Q_n ≤ total − charged as real numbers."""
    left = round_down(total - charged)
    out = []
    for i in range(levels, 0, -1):
        share = left if i == 1 else round_down(left / i)
        out.append(share)
        left = round_down(left - share) if i > 1 else 0.0
    return tuple(out)


def critical_value(k: int, m: int, q: float, total: float | None, others: int,
                   pi_hat: float | None = None, lam: float | None = None) -> float:
    """c(k) (or c̃(k) with π̂ and λ), rounded down so that c(k) ≤ q·k/m and
    c(k) ≤ Q_n·(k + r)/m (divided by π̂) hold as real numbers: the FDR proof's step (b)."""
    x = q * k if total is None else min(q * k, total * (k + others))
    if pi_hat is None:
        return min(1.0, round_down(x / m))
    assert lam is not None
    return min(lam, round_down(x / (m * pi_hat)))


def _log_below(h: np.ndarray, sigma: float, c: float) -> np.ndarray:
    """log P(p ≤ c) = log Φ(H/σ + Φ⁻¹(c)) for held candidates (H > 0)."""
    if c >= 1.0:
        return np.zeros(h.size)
    return log_ndtr(h / sigma + ndtri(c))


def level_bh(weights: np.ndarray, m: int, sigma: float, q: float, random: RandomSource, *,
             total: float | None = None, others: int = 0,
             adaptive_lambda: float | None = None) -> tuple[np.ndarray, int]:
    """BH over a domain of ``m`` candidates of which those with ``weights`` H > 0 are held and
    the other m0 = m − len(H) have weight 0; noise N(0, σ²) on each. ``total`` Q_n and
    ``others`` r (released before this level) give the second critical-value term.
    Returns (mask over the held released, number of zero-weight candidates released).

    Top-down, as public.md §3: k = m and all candidates alive; at each step a held g stays with
    probability F_g(c(k))/F_g(c_prev) (F_g(c) = Φ(H_g/σ + Φ⁻¹(c)), exact Bernoulli), and the
    alive zero-weight count Z becomes Binomial(Z, c(k)/c_prev) (their p-values are uniform:
    P(p ≤ c(k) | p ≤ c_prev) = c(k)/c_prev); if at least k remain, k* = k, else k ← that
    number. Adaptive (λ = ½): first 1{p_g ≤ λ} for each held g (exact Bernoulli of F_g(λ)) and
    Z = Binomial(m0, ½) (set bits); π̂ from those; the loop continues from them with c_prev =
    λ (public.md §9). No noise value or p-value is materialised."""
    h = np.asarray(weights, dtype=np.float64)
    m = int(m)
    m0 = m - h.size
    if m0 < 0 or not np.all(h > 0):
        raise ValueError("level_bh: weights must be the positive weights of at most m "
                         "candidates")
    alive = np.arange(h.size)
    log_before = np.zeros(h.size)
    zero, c_before = m0, 1.0
    pi_hat = None
    if adaptive_lambda is not None:
        if adaptive_lambda not in LEVEL_LAMBDAS:
            raise ValueError(f"level_bh: λ must be one of {LEVEL_LAMBDAS}")
        lam = float(adaptive_lambda)
        log_now = _log_below(h, sigma, lam)
        below = keep_with_log_probability(log_now, random)
        zero = binomial_half(m0, random)
        above = (h.size - int(below.sum())) + (m0 - zero)
        pi_hat = (1.0 + above) / (m * (1.0 - lam))
        alive, log_before, c_before = alive[below], log_now[below], lam
    k = m
    while alive.size + zero > 0:
        c = critical_value(k, m, q, total, others, pi_hat, adaptive_lambda)
        log_now = _log_below(h[alive], sigma, c)
        keep = keep_with_log_probability(np.minimum(log_now - log_before, 0.0), random)
        alive, log_before = alive[keep], log_now[keep]
        if c < c_before:
            zero = binomial(zero, c / c_before, random)
        c_before = c
        left = alive.size + zero
        if left >= k:
            break
        k = left
    out = np.zeros(h.size, dtype=bool)
    out[alive] = True
    return out, int(zero)


__all__ = ["LEVEL_LAMBDAS", "check_level_fdr", "critical_value", "level_bh", "total_shares"]
