"""Benjamini-Hochberg over a DPNE level's public candidate set C_n, drawn exactly (proof:
ngrams.md §3a–§3d). Post-processing of the level's noisy values, so it holds no privacy claim
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
- ``class_bh``: weighted BH over classes of candidates, one BH weight a class (§3d), the
  zero-weight candidates as one count per class; ``level_bh`` is its one-class case;
- ``rank_bands``, ``rank_class_weights``: level 2's classes (pairs of decade bands of public
  rank) and their weights, from S_1 and the public list only; ``block_class_weights``: a level
  n ≥ 3's classes (its blocks by min(|prefixes|, |suffixes|)) and weights, from S_{n−1} only;
- ``check_level_fdr``, ``check_class_power``, ``total_shares``: the parameters, validated
  before any data is read.
"""

from __future__ import annotations

from fractions import Fraction

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
# a bounded range: past γ = 2 nearly all the weight sits on the few top-ranked pairs
MAX_CLASS_POWER = 2.0


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


def check_class_power(power: object, name: str, level_fdr: float | None) -> float | None:
    """``level2_rank_power`` or ``level_block_power`` γ validated: None (plain BH) or in
    (0, 2], only with ``level_fdr`` (the weights act on the BH rule)."""
    if power is None:
        return None
    allowed = (f"null (plain BH) or a power in (0, {MAX_CLASS_POWER:g}] of the BH class "
               "weights, e.g. 1.0")
    power = check_real(power, name, 0.0, MAX_CLASS_POWER, low_open=True, allowed=allowed)
    if level_fdr is None:
        raise ParameterError(name, power, "null while level_fdr is null",
                             "Set level_fdr (e.g. 0.01) to release levels n >= 2 by "
                             "Benjamini-Hochberg, or leave this null.")
    return power


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
                   pi_hat: float | None = None, lam: float | None = None,
                   weight: float = 1.0) -> float:
    """c(k) (or c̃(k) with π̂ and λ) for a candidate of BH weight w (1: unweighted), rounded
    down so that c(k) ≤ w·q·k/m and c(k) ≤ w·Q_n·(k + r)/m (divided by π̂) hold as real
    numbers: the FDR proof's step (b)."""
    x = q * k if total is None else min(q * k, total * (k + others))
    if weight != 1.0:   # w·x rounded once more; round_down's margin covers it
        x = weight * x
    if pi_hat is None:
        return min(1.0, round_down(x / m))
    assert lam is not None
    return min(lam, round_down(x / (m * pi_hat)))


def _log_below(h: np.ndarray, sigma: float, c: float | np.ndarray) -> np.ndarray:
    """log P(p ≤ c) = log Φ(H/σ + Φ⁻¹(c)) for held candidates (H > 0); c one value, or one
    per candidate."""
    if not isinstance(c, np.ndarray):
        if c >= 1.0:
            return np.zeros(h.size)
        return log_ndtr(h / sigma + ndtri(c))
    out = np.zeros(h.size)
    low = c < 1.0
    out[low] = log_ndtr(h[low] / sigma + ndtri(c[low]))
    return out


def rank_bands(ranks: np.ndarray, list_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(band of each item, geometric mid-rank of each band) from 0-based public ranks (−1: off
    the list): decades of rank 1–10, 11–100, …, the last listed band ending at the list's end
    ``list_size``; items off the list take one band after it, ranks list_size..10·list_size."""
    size = int(list_size)
    if size < 1:
        raise ValueError("rank_bands: the public list must hold at least one item")
    edges = [10 ** e for e in range(1, 19) if 10 ** e < size] + [size]
    lows = [1] + edges
    highs = edges + [10 * size]
    mids = np.sqrt(np.array(lows, dtype=np.float64) * np.array(highs, dtype=np.float64))
    r = np.asarray(ranks, dtype=np.int64)
    band = np.where(r >= 0, np.searchsorted(np.array(edges), r + 1, side="left"), len(edges))
    return band.astype(np.int64), mids


def rank_class_weights(class_sizes: np.ndarray, mids: np.ndarray,
                       power: float) -> np.ndarray:
    """BH weight of each class (i, j) of band pairs (flattened i·B + j; ``class_sizes`` its
    number of candidates): ∝ (mid_i·mid_j)^(−γ) (Zipf: frequency ∝ 1/rank, so under
    independence the expected count of a pair is ∝ 1/(r_i·r_j); γ = ``power``), scaled so that
    Σ size·w ≤ Σ size, checked in exact rational arithmetic (the FDR bound needs it, §3d)."""
    rel = np.log(np.asarray(mids, dtype=np.float64) / float(mids[0]))
    raw = np.exp(-float(power) * (rel[:, None] + rel[None, :])).ravel()   # ≤ 1, no overflow
    return normalised_weights(class_sizes, raw)


def normalised_weights(class_sizes: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """``raw`` relative class weights scaled so that Σ size·w ≤ Σ size = m, each weight and
    the scale rounded down, checked in exact rational arithmetic (the FDR bound needs it)."""
    sizes = np.asarray(class_sizes, dtype=np.int64)
    raw = np.asarray(raw, dtype=np.float64)
    m = int(sizes.sum())
    scale = round_down(m / float((raw * sizes).sum()))
    w = np.array([round_down(x * scale) for x in raw.tolist()])
    while sum(Fraction(int(n)) * Fraction(x) for n, x in zip(sizes, w.tolist())) > m:
        w = np.array([round_down(x) for x in w.tolist()])   # never seen: rounding slack
    return w


def block_class_weights(prefixes: np.ndarray, suffixes: np.ndarray,
                        power: float) -> tuple[np.ndarray, np.ndarray]:
    """(class of each block, BH weight of each class) at a level n ≥ 3. Block b of C_n (the
    candidates S[a] + S[c][-1:] around one (n−2)-gram) has |A_b| prefixes and |B_b| suffixes in
    S_{n−1}. If each released (n−1)-gram continues in about one way, about max(|A|, |B|) of its
    |A|·|B| candidates are held: a share 1/min(|A|, |B|). Classes: min(|A|, |B|) in bands of
    powers of 2 (1, 2–3, 4–7, …), weight ∝ (geometric mid of the band)^(−γ), γ = ``power``,
    scaled as ``normalised_weights``."""
    a = np.asarray(prefixes, dtype=np.int64)
    b = np.asarray(suffixes, dtype=np.int64)
    low = np.maximum(np.minimum(a, b), 1)
    band = (np.frexp(low.astype(np.float64))[1] - 1).astype(np.int64)   # ⌊log2⌋, exact
    bands = int(band.max()) + 1 if band.size else 1
    lows = 2.0 ** np.arange(bands)
    mids = np.sqrt(lows * (2.0 * lows - 1.0))
    sizes = np.zeros(bands, dtype=np.int64)
    np.add.at(sizes, band, a * b)
    return band, normalised_weights(sizes, (mids / mids[0]) ** -float(power))


def level_bh(weights: np.ndarray, m: int, sigma: float, q: float, random: RandomSource, *,
             total: float | None = None, others: int = 0,
             adaptive_lambda: float | None = None) -> tuple[np.ndarray, int]:
    """BH over a domain of ``m`` candidates of which those with ``weights`` H > 0 are held and
    the other m0 = m − len(H) have weight 0; noise N(0, σ²) on each. ``total`` Q_n and
    ``others`` r (released before this level) give the second critical-value term.
    Returns (mask over the held released, number of zero-weight candidates released).
    ``class_bh`` with one class of BH weight 1 (the same draws in the same order)."""
    h = np.asarray(weights, dtype=np.float64)
    if int(m) - h.size < 0:
        raise ValueError("level_bh: weights must be the positive weights of at most m "
                         "candidates")
    mask, zero = class_bh(h, np.zeros(h.size, dtype=np.int64), np.array([int(m)]),
                          np.ones(1), sigma, q, random, total=total, others=others,
                          adaptive_lambda=adaptive_lambda)
    return mask, int(zero[0])


def class_bh(weights: np.ndarray, classes: np.ndarray, class_sizes: np.ndarray,
             class_weights: np.ndarray, sigma: float, q: float, random: RandomSource, *,
             total: float | None = None, others: int = 0,
             adaptive_lambda: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted BH (Genovese, Roeder & Wasserman 2006; ngrams.md §3d) over a domain split into
    classes: class j has ``class_sizes[j]`` candidates, each of BH weight ``class_weights[j]``
    = w_j (Σ_j size_j·w_j ≤ m = Σ size_j: ``rank_class_weights``); the held candidates have
    ``weights`` H > 0 and class ``classes[i]``, the others of class j weight 0. Critical value
    of a class-j candidate: w_j·c(k) (``critical_value``); adaptive (λ = ½): π̂ = (w_max +
    Σ_g w_g·1{p_g > λ})/(m(1 − λ)) (public.md §9). Returns (mask over the held released,
    released zero-weight count per class).

    Top-down, as public.md §3: k = m and all candidates alive; at each step a held g stays with
    probability F_g(c_g(k))/F_g(c_prev) (F_g(c) = Φ(H_g/σ + Φ⁻¹(c)), exact Bernoulli), and the
    alive zero-weight count Z_j of each class becomes Binomial(Z_j, c_j(k)/c_j,prev) (their
    p-values are uniform); if at least k remain, k* = k, else k ← that number. Adaptive:
    first 1{p_g ≤ λ} for each held g (exact Bernoulli of F_g(λ)) and Z_j = Binomial(m0_j, ½)
    (set bits); π̂ from those; the loop continues from them with c_prev = λ (public.md §9).
    No noise value or p-value is materialised."""
    h = np.asarray(weights, dtype=np.float64)
    cls = np.asarray(classes, dtype=np.int64)
    sizes = np.asarray(class_sizes, dtype=np.int64)
    w = np.asarray(class_weights, dtype=np.float64)
    m = int(sizes.sum())
    zero = sizes - np.bincount(cls, minlength=sizes.size)
    if (cls.size != h.size or sizes.size != w.size or zero.size != sizes.size
            or (zero < 0).any() or not np.all(h > 0) or not (w >= 0).all() or m <= 0):
        raise ValueError("class_bh: weights must be the positive weights of at most each "
                         "class's size of its candidates, class weights >= 0")
    alive = np.arange(h.size)
    log_before = np.zeros(h.size)
    c_before = np.ones(w.size)
    pi_hat = None
    if adaptive_lambda is not None:
        if adaptive_lambda not in LEVEL_LAMBDAS:
            raise ValueError(f"class_bh: λ must be one of {LEVEL_LAMBDAS}")
        lam = float(adaptive_lambda)
        log_now = _log_below(h, sigma, lam)
        below = keep_with_log_probability(log_now, random)
        zero_below = np.array([binomial_half(int(z), random) for z in zero], dtype=np.int64)
        # Σ w over the candidates above λ: held ones by class, then the zero-weight ones
        held_above = np.bincount(cls[~below], minlength=w.size)
        w_max = float(w[sizes > 0].max())
        above = float((w * held_above).sum() + (w * (zero - zero_below)).sum())
        pi_hat = (w_max + above) / (m * (1.0 - lam))
        alive, log_before, zero = alive[below], log_now[below], zero_below
        c_before = np.full(w.size, lam)
    k = m
    while alive.size + int(zero.sum()) > 0:
        c = np.array([critical_value(k, m, q, total, others, pi_hat, adaptive_lambda, wj)
                      for wj in w.tolist()])
        log_now = _log_below(h[alive], sigma, c[cls[alive]] if w.size > 1 else float(c[0]))
        keep = keep_with_log_probability(np.minimum(log_now - log_before, 0.0), random)
        alive, log_before = alive[keep], log_now[keep]
        for j in range(w.size):
            if c[j] < c_before[j]:
                zero[j] = binomial(int(zero[j]), c[j] / c_before[j], random)
        c_before = c
        left = alive.size + int(zero.sum())
        if left >= k:
            break
        k = left
    out = np.zeros(h.size, dtype=bool)
    out[alive] = True
    return out, zero


__all__ = ["LEVEL_LAMBDAS", "block_class_weights", "check_class_power", "check_level_fdr",
           "class_bh", "critical_value", "level_bh", "normalised_weights", "rank_bands",
           "rank_class_weights", "total_shares"]
