"""Weighted Benjamini-Hochberg over a public list, drawn exactly: post-processing of the
noisy values of P's items, so it holds no privacy claim of its own (public.md §3, §5, §9).

- ``check_bands``, ``band_weights``: BH weights by public rank band (mean 1 over P);
- ``weighted_bh``: the BH decisions (plain, or adaptive with a weighted Storey estimate of the
  null weight), drawn as exact Bernoulli events from closed-form probabilities: no noise value or
  p-value is materialised (mechanisms/README.md §3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..errors import ParameterError
from ..privacy.noise import RandomSource, bernoulli

MAX_PUBLIC_ITEMS = 100_000_000   # the largest rank limit of a band


def check_bands(bands) -> tuple[tuple[int, float], ...]:
    """[[rank limit, relative weight], ...] with increasing limits and weights ≥ 0, not all 0."""
    expected = ("a list of [rank limit, relative weight] pairs with increasing integer limits "
                f"up to {MAX_PUBLIC_ITEMS:,} and weights >= 0, e.g. [[10000, 8], [40000, 4], "
                "[100000, 2], [320000, 0.5]]")
    try:
        out = tuple((int(r), float(w)) for r, w in bands)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("public_bands", bands, expected) from None
    ok = (out and all(isinstance(r, int) and not isinstance(r, bool)
                      and not isinstance(w, bool) for r, w in bands)
          and all(a[0] < b[0] for a, b in zip(out, out[1:])) and out[0][0] >= 1
          and out[-1][0] <= MAX_PUBLIC_ITEMS
          and all(math.isfinite(w) and w >= 0 for _, w in out) and any(w > 0 for _, w in out))
    if ok:   # weights are relative: bound their spread so the normalisation stays exact enough
        top = max(w for _, w in out)
        ok = all(w == 0 or 1e-12 <= w / top for _, w in out) and top < 1e300
    if not ok:
        raise ParameterError("public_bands", bands, expected)
    return out


def band_weights(n_items: int, bands: Sequence[Sequence[float]]) -> np.ndarray:
    """BH weight of each rank 0..n_items−1: its band's relative weight, scaled to mean 1."""
    limits = np.array([r for r, _ in bands])
    rel = np.array([w for _, w in bands])
    raw = rel[np.searchsorted(limits, np.arange(n_items), side="right")]
    total = raw.sum()
    return raw * (n_items / total) if total > 0 else raw


def keep_with_log_probability(log_p: np.ndarray, random: RandomSource) -> np.ndarray:
    """Exact Bernoulli(exp(log_p)) draws; a probability near 1 is drawn as its complement
    −expm1(log_p) so that its small complement keeps its relative accuracy."""
    if not np.isfinite(log_p[log_p != -np.inf]).all():   # fail closed on NaN / +inf
        raise FloatingPointError("a release probability is not a number")
    keep = np.empty(log_p.size, dtype=bool)
    low = log_p < -math.log(2.0)
    keep[low] = bernoulli(np.exp(log_p[low]), random)
    keep[~low] = ~bernoulli(-np.expm1(log_p[~low]), random)
    return keep


def weighted_bh(weights: np.ndarray, bh_weights: np.ndarray, sigma: float, fdr: float,
                random: RandomSource, other_discoveries: int = 0,
                adaptive_lambda: float | None = None) -> np.ndarray:
    """Decisions of weighted Benjamini-Hochberg at level q = ``fdr`` over m public items with
    pre-noise weights H (0 for items nobody holds), noisy values y = H + N(0, σ²), p-values
    p = Q(y/σ) and BH weights w ≥ 0 (mean 1). ``other_discoveries`` r₀: items released beside
    P by noise independent of P's (the candidates outside P, earlier rounds); they count as
    discoveries, so the false-discovery bound covers the whole release (public.md §5).

    Item x is rejected at step k when p_x ≤ c_x(k) = min(1, w_x·q·(k + r₀)/m); K_x is the
    smallest such k (∞ if none ≤ m), so P(K_x ≤ k) = F_x(k) = Φ(H_x/σ + Φ⁻¹(c_x(k)))
    (= c_x(k) when H_x = 0). BH releases {x : K_x ≤ k*}, k* = max{k : #{x : K_x ≤ k} ≥ k}.
    We find k* from the top, as BH does, drawing only the events K_x ≤ k: start with k = m and
    all items; keep each item with probability F_x(k)/F_x(k_before) (given it was kept at
    k_before); if n ≥ k items remain, k* = k and they are the release, else continue with
    k = n (public.md §3). Returns a mask over the m items. No noise value or p-value is
    materialised.

    With ``adaptive_lambda`` λ: weighted Storey-type adaptive BH (public.md §9). First the
    events p_x ≤ λ are drawn (probability Φ(H_x/σ + Φ⁻¹(λ))), giving the null-weight estimate
    π̂ = (max w + Σ_x w_x·1{p_x > λ})/(m(1 − λ)); then BH runs as above at level q/π̂ with
    critical values capped at λ, continuing from the kept items with ratios F_x(k)/F_x(λ)."""
    H = np.asarray(weights, dtype=np.float64)
    w = np.asarray(bh_weights, dtype=np.float64)
    m = H.size
    out = np.zeros(m, dtype=bool)
    alive = np.flatnonzero(w > 0)
    if alive.size == 0:
        return out

    def log_cdf(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """log P(p_x ≤ c_x) for the items idx."""
        h = H[idx]
        held = h > 0
        res = np.log(c)
        if held.any():
            res[held] = log_ndtr(h[held] / sigma + ndtri(c[held]))
        return res

    level, cap = fdr, 1.0
    log_before = np.zeros(alive.size)
    if adaptive_lambda is not None:
        lam = float(adaptive_lambda)
        log_now = log_cdf(np.full(alive.size, lam), alive)
        below = keep_with_log_probability(log_now, random)
        null_weight = (w.max() + w[alive[~below]].sum()) / (m * (1.0 - lam))
        level, cap = fdr / null_weight, lam
        alive, log_before = alive[below], log_now[below]
    k = m
    while alive.size:
        c = np.minimum(w[alive] * (level * (k + other_discoveries) / m), cap)
        log_now = log_cdf(c, alive)
        keep = keep_with_log_probability(np.minimum(log_now - log_before, 0.0), random)
        alive, log_before = alive[keep], log_now[keep]
        if alive.size >= k:
            break
        k = alive.size
    out[alive] = True
    return out


__all__ = ["MAX_PUBLIC_ITEMS", "band_weights", "check_bands", "keep_with_log_probability",
           "weighted_bh"]
