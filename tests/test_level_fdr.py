"""DPNE's Benjamini-Hochberg levels (mechanisms/level_fdr.py, ngrams.md §3a–§3c): the exact
top-down draw against textbook BH on materialised p-values, the false-discovery bound by
Monte Carlo, the exact Binomial(n, ½), the parameters refused before any data, and a release."""

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from chi_square import pooled_chi2_pvalue
from scipy.stats import chi2_contingency
from dp_vocab.errors import ParameterError
from dp_vocab.mechanisms.level_fdr import (block_class_weights, class_bh, critical_value,
                                           level_bh, rank_bands, rank_class_weights,
                                           total_shares)
from dp_vocab.privacy.noise import RandomSource, binomial_half
from dp_vocab.registry import make_mechanism


def textbook_bh(y, sigma, q, total=None, others=0, lam=None):
    """BH on explicit noisy values, one row per run (ngrams.md §3a): p = Q(y/σ), critical
    values c(k) = min(1, min(qk, Q(k + r))/m), adaptive: π̂ = (1 + #{p > λ})/(m(1 − λ)) and
    min(λ, c(k)/π̂); released p ≤ c(k*), k* the largest k with p_(k) ≤ c(k)."""
    from scipy.stats import norm
    p = norm.sf(y / sigma)
    runs, m = p.shape
    k = np.arange(1, m + 1)
    x = q * k if total is None else np.minimum(q * k, total * (k + others))
    if lam is None:
        c = np.broadcast_to(np.minimum(1.0, x / m), (runs, m))
    else:
        pi_hat = (1.0 + (p > lam).sum(axis=1)) / (m * (1.0 - lam))
        c = np.minimum(lam, x[None, :] / (m * pi_hat[:, None]))
    below = np.sort(p, axis=1) <= c
    k_star = np.where(below.any(axis=1), m - np.argmax(below[:, ::-1], axis=1), 0)
    cut = np.where(k_star > 0, c[np.arange(runs), np.maximum(k_star, 1) - 1], -1.0)
    return p <= cut[:, None]


def homogeneity_pvalue(ours: list, ref: list) -> float:
    """χ² test of homogeneity of two samples of outcomes (``ref`` the larger); cells where the
    pooled law expects fewer than 50 of ``ours`` (a function of the column totals only) are
    merged into one, with the next smallest till it expects 50."""
    cells = sorted(set(ours) | set(ref))
    a = np.array([sum(1 for o in ours if o == c) for c in cells], dtype=float)
    count = Counter(ref)
    b = np.array([count[c] for c in cells], dtype=float)
    share = len(ours) / (len(ours) + len(ref))
    small = (a + b) * share < 50
    for i in np.argsort(a + b, kind="stable"):
        if (a + b)[small].sum() * share >= 50 or not small.any():
            break
        small[i] = True
    table = np.stack([a[~small], b[~small]], axis=1)
    if small.any():
        table = np.vstack([table, [a[small].sum(), b[small].sum()]])
    assert table.shape[0] >= 3, list(zip(cells, a, b))
    return chi2_contingency(table.T, correction=False).pvalue


# held weights near the thresholds (both outcomes likely) and 48 zero-weight candidates
HELD = np.array([0.3, 0.6, 1.0, 1.4, 1.8, 2.2, 2.6, 3.0, 3.4, 3.8, 4.5, 6.0])
M, SIGMA, Q = 60, 1.0, 0.2


@pytest.mark.slow
@pytest.mark.parametrize("lam, total, others", [(None, None, 0), (0.5, None, 0),
                                                (None, 0.05, 25), (0.5, 0.05, 25)])
def test_level_bh_has_the_law_of_bh_on_materialised_p_values(lam, total, others):
    """The law of the outcome (number of held candidates released, a weak and a strong one
    among them, number of zero-weight ones released ∧ 3) from ``level_bh`` against textbook BH
    on explicit Gaussian noise (float noise: fine in a test): χ² test of homogeneity of the two samples (4n reference
    runs), cells where ours expects fewer than 50 merged, rejected at p < 1e-6 (false failure
    ~1e-6 per case). Each case runs in two to four seconds."""
    n = 4000
    rng = RandomSource(20261126 + others + (lam is not None))
    ours = []
    for _ in range(n):
        mask, z = level_bh(HELD, M, SIGMA, Q, rng, total=total, others=others,
                           adaptive_lambda=lam)
        ours.append((int(mask.sum()), bool(mask[3]), bool(mask[10]), min(z, 3)))
    gen = np.random.default_rng(7)
    y = np.concatenate([np.broadcast_to(HELD, (4 * n, HELD.size)),
                        np.zeros((4 * n, M - HELD.size))], axis=1)
    y = y + SIGMA * gen.standard_normal(y.shape)
    rel = textbook_bh(y, SIGMA, Q, total, others, lam)
    held, zero = rel[:, :HELD.size], rel[:, HELD.size:].sum(axis=1)
    ref = list(zip(held.sum(axis=1).tolist(), held[:, 3].tolist(), held[:, 10].tolist(),
                   np.minimum(zero, 3).tolist()))
    p = homogeneity_pvalue(ours, ref)
    assert p > 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("lam", [None, 0.5])
def test_level_false_discovery_share_is_at_most_q(lam):
    """Strong and weak held candidates and 300 zero-weight ones (nulls). Plain BH's expected
    share of released nulls is exactly q·m0/m (independent p-values, uniform nulls); adaptive
    BH's is ≤ q (ngrams.md §3a), and the total term bounds E[V/(R + r)] by Q_n. Hoeffding: a
    share in [0, 1] averaged over n runs is within t = sqrt(ln(1e6)/(2n)) of its expectation
    except with probability 2e-6, so each check fails falsely with probability ≤ 2e-6."""
    m, q, total, others, n = 400, 0.2, 0.02, 100, 2000
    held = np.concatenate([np.full(30, 50.0), np.linspace(0.2, 2.0, 70)])
    m0 = m - held.size
    rng = RandomSource(99 if lam is None else 100)
    level, whole = np.empty(n), np.empty(n)
    for i in range(n):
        mask, z = level_bh(held, m, 1.0, q, rng, adaptive_lambda=lam)
        level[i] = z / max(int(mask.sum()) + z, 1)
        mask, z = level_bh(held, m, 1.0, q, rng, total=total, others=others,
                           adaptive_lambda=lam)
        whole[i] = z / (int(mask.sum()) + z + others)
    t = math.sqrt(math.log(1e6) / (2 * n))
    if lam is None:
        assert abs(level.mean() - q * m0 / m) < t, level.mean()
        assert whole.mean() <= total * m0 / m + t, whole.mean()
    else:
        assert level.mean() <= q + t, level.mean()
        assert whole.mean() <= total + t, whole.mean()


# ---- weighted BH over classes (ngrams.md §3d) -----------------------------------------------------

def textbook_weighted_bh(y, sigma, q, w, total=None, others=0, lam=None):
    """Weighted BH on explicit noisy values, one row per run: p = Q(y/σ), critical values
    c_i(k) = min(1, w_i·min(qk, Q(k + r))/m); adaptive: π̂ = (max w + Σ_i w_i·1{p_i > λ})/
    (m(1 − λ)) and min(λ, w_i·…/(m π̂)); k* = max{k : #{i : p_i ≤ c_i(k)} ≥ k}; released
    p_i ≤ c_i(k*)."""
    from scipy.stats import norm
    p = norm.sf(y / sigma)
    runs, m = p.shape
    ks = np.arange(1, m + 1)
    x = q * ks if total is None else np.minimum(q * ks, total * (ks + others))
    if lam is None:
        scale, cap = np.full(runs, 1.0 / m), 1.0
    else:
        pi_hat = (w.max() + ((p > lam) * w).sum(axis=1)) / (m * (1.0 - lam))
        scale, cap = 1.0 / (m * pi_hat), lam

    def crit(k):   # runs × m
        return np.minimum(cap, w[None, :] * x[k - 1] * scale[:, None])
    counts = np.stack([(p <= crit(k)).sum(axis=1) for k in ks], axis=1)
    ok = counts >= ks[None, :]
    k_star = np.where(ok.any(axis=1), m - np.argmax(ok[:, ::-1], axis=1), 0)
    out = np.zeros_like(p, dtype=bool)
    for k in np.unique(k_star[k_star > 0]):
        rows = k_star == k
        out[rows] = p[rows] <= crit(k)[rows]
    return out


# three classes (8, 20, 32 candidates; BH weights 4, 1, ¼: Σ size·w = m = 60), four held
# candidates in each, near the thresholds
CLASS_SIZES = np.array([8, 20, 32])
CLASS_W = np.array([4.0, 1.0, 0.25])
CLASS_HELD = [np.array([0.6, 1.4, 2.2, 3.0]), np.array([1.0, 1.8, 2.6, 3.8]),
              np.array([0.3, 3.4, 4.5, 6.0])]


@pytest.mark.slow
@pytest.mark.parametrize("lam, total, others", [(None, None, 0), (0.5, None, 0),
                                                (None, 0.05, 25), (0.5, 0.05, 25)])
def test_class_bh_has_the_law_of_weighted_bh_on_materialised_p_values(lam, total, others):
    """The law of the outcome (held released, two given held ones among them, zero-weight
    released per class ∧ 2) from ``class_bh`` against textbook weighted BH on explicit Gaussian
    noise: χ² homogeneity (4n reference runs), cells where ours expects < 50 merged, rejected at
    p < 1e-6 (false failure ~1e-6 per case)."""
    n = 4000
    held = np.concatenate(CLASS_HELD)
    cls = np.repeat(np.arange(3), 4)
    rng = RandomSource(20261127 + others + (lam is not None))
    ours = []
    for _ in range(n):
        mask, z = class_bh(held, cls, CLASS_SIZES, CLASS_W, SIGMA, Q, rng, total=total,
                           others=others, adaptive_lambda=lam)
        ours.append((int(mask.sum()), bool(mask[1]), bool(mask[9]),
                     *np.minimum(z, 2).tolist()))
    # materialised: each class's held candidates first, then its zero-weight ones
    y_row = np.concatenate([np.concatenate([h, np.zeros(size - h.size)])
                            for h, size in zip(CLASS_HELD, CLASS_SIZES)])
    w_row = np.repeat(CLASS_W, CLASS_SIZES)
    gen = np.random.default_rng(8)
    y = y_row[None, :] + SIGMA * gen.standard_normal((4 * n, y_row.size))
    rel = textbook_weighted_bh(y, SIGMA, Q, w_row, total, others, lam)
    starts = np.concatenate([[0], np.cumsum(CLASS_SIZES)[:-1]])
    held_cols = np.concatenate([s + np.arange(4) for s in starts])
    zero = np.stack([rel[:, s + 4:s + size].sum(axis=1) for s, size in zip(starts, CLASS_SIZES)],
                    axis=1)
    ref = [(int(r[held_cols].sum()), bool(r[held_cols[1]]), bool(r[held_cols[9]]),
            *np.minimum(zr, 2).tolist()) for r, zr in zip(rel, zero)]
    assert homogeneity_pvalue(ours, ref) > 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("lam", [None, 0.5])
def test_class_false_discovery_share_is_at_most_q(lam):
    """Weighted BH over classes (sizes 40, 120, 240, weights 4, 1, ½: Σ size·w = m = 400),
    strong and weak held candidates. No critical value reaches 1 here, so plain weighted BH's
    expected share of released nulls is exactly q·Σ_null w/m; adaptive's is ≤ q; the total
    term bounds E[V/(R + r)] by Q_n·Σ_null w/m (plain). Hoeffding as above: each check fails
    falsely with probability ≤ 2e-6."""
    sizes, w = np.array([40, 120, 240]), np.array([4.0, 1.0, 0.5])
    q, total, others, n = 0.2, 0.02, 100, 2000
    held = np.concatenate([np.full(20, 50.0), np.linspace(0.5, 3.0, 10),
                           np.linspace(0.2, 2.0, 20), np.linspace(0.2, 2.0, 10)])
    cls = np.repeat([0, 0, 1, 2], [20, 10, 20, 10])
    null_w = float((w * (sizes - np.bincount(cls, minlength=3))).sum()) / sizes.sum()
    rng = RandomSource(199 if lam is None else 200)
    level, whole = np.empty(n), np.empty(n)
    for i in range(n):
        mask, z = class_bh(held, cls, sizes, w, 1.0, q, rng, adaptive_lambda=lam)
        level[i] = z.sum() / max(int(mask.sum()) + z.sum(), 1)
        mask, z = class_bh(held, cls, sizes, w, 1.0, q, rng, total=total, others=others,
                           adaptive_lambda=lam)
        whole[i] = z.sum() / (int(mask.sum()) + z.sum() + others)
    t = math.sqrt(math.log(1e6) / (2 * n))
    if lam is None:
        assert abs(level.mean() - q * null_w) < t, level.mean()
        assert whole.mean() <= total * null_w + t, whole.mean()
    else:
        assert level.mean() <= q + t, level.mean()
        assert whole.mean() <= total + t, whole.mean()


def test_rank_bands_are_decades_with_the_list_end_and_one_band_off_the_list():
    band, mids = rank_bands(np.array([0, 9, 10, 99, 100, 317_708, -1, 12_345]), 317_709)
    assert band.tolist() == [0, 0, 1, 1, 2, 5, 6, 4]
    assert mids.size == 7 and mids[0] == pytest.approx(math.sqrt(10))
    assert mids[5] == pytest.approx(math.sqrt(1e5 * 317_709))
    assert mids[6] == pytest.approx(317_709 * math.sqrt(10))
    band, mids = rank_bands(np.array([0, 4, -1]), 5)   # a list shorter than a decade
    assert band.tolist() == [0, 0, 1] and mids.size == 2


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0])
def test_rank_class_weights_sum_to_at_most_m_exactly(power):
    counts = np.array([10, 90, 900, 5116, 3311, 0, 253])
    _, mids = rank_bands(np.array([-1]), 317_709)
    sizes = np.outer(counts, counts).ravel()
    w = rank_class_weights(sizes, mids, power)
    m = int(counts.sum()) ** 2
    total = sum(Fraction(int(a)) * Fraction(b) for a, b in zip(sizes, w.tolist()))
    assert total <= m and total >= m * (1 - Fraction(1, 10 ** 6))
    grid = w.reshape(7, 7)
    assert (grid == grid.T).all() and (np.diff(grid, axis=1) < 0).all()   # rarer: lighter
    assert grid[0, 1] / grid[0, 0] == pytest.approx((mids[0] / mids[1]) ** power)


def _join_and_classes(prev, first, last, bands):
    from dp_vocab.data.token_corpus import BandClasses, CandidateJoin
    join = CandidateJoin(prev)
    return join, BandClasses(join, np.array(first), np.array(last), bands)


def test_band_classes_count_every_candidate_once():
    """Class sizes against the materialised C_n (level 3 over eight bigrams: several blocks),
    and every key's class."""
    prev = sorted([("a", "b"), ("b", "c"), ("b", "a"), ("c", "a"), ("a", "c"), ("c", "b"),
                   ("b", "b"), ("d", "b")])
    band = {"a": 0, "b": 1, "c": 2, "d": 2}
    first = [band[g[0]] for g in prev]
    last = [band[g[-1]] for g in prev]
    join, classes = _join_and_classes(prev, first, last, 3)
    members = [(i, j) for i, g in enumerate(prev) for j, h in enumerate(prev) if g[1:] == h[:-1]]
    assert join.size == len(members) == classes.sizes.sum()
    want = np.zeros(9, dtype=np.int64)
    for i, j in members:
        want[first[i] * 3 + last[j]] += 1
    assert classes.sizes.tolist() == want.tolist()
    keys = np.array([i * len(prev) + j for i, j in members])
    assert classes.class_of(keys).tolist() == [first[i] * 3 + last[j] for i, j in members]


@pytest.mark.slow
def test_band_class_sample_is_uniform_over_the_class_less_the_held():
    """Two draws from class (band 0, band 1) of the level-3 C_n above (members in two blocks)
    with one of its keys excluded: every pair of the remaining members equally likely (χ²,
    cells ≥ 50 expected, rejected at p < 1e-6)."""
    from itertools import combinations
    prev = sorted([("a", "b"), ("b", "c"), ("b", "a"), ("c", "a"), ("a", "c"), ("c", "b"),
                   ("b", "b"), ("d", "b"), ("c", "d")])
    band = {"a": 0, "b": 1, "c": 0, "d": 1}
    first = [band[g[0]] for g in prev]
    last = [band[g[-1]] for g in prev]
    join, classes = _join_and_classes(prev, first, last, 2)
    members = [prev[i] + prev[j][-1:] for i, g in enumerate(prev) for j, h in enumerate(prev)
               if g[1:] == h[:-1] and first[i] == 0 and last[j] == 1]
    held = members[0]
    exclude = np.array([join.key_of(held)], dtype=np.int64)
    rest = members[1:]
    assert len(rest) >= 3 and len({g[1] for g in rest}) >= 2   # several blocks
    cells = {frozenset(p): i for i, p in enumerate(combinations(rest, 2))}
    rng = RandomSource(31)
    observed = np.zeros(len(cells))
    runs = 100 * len(cells)
    for _ in range(runs):
        observed[cells[frozenset(classes.sample(2, 1, exclude, rng))]] += 1
    assert pooled_chi2_pvalue(observed, np.full(len(cells), runs / len(cells))) > 1e-6


def test_block_classes_are_powers_of_two_of_the_smaller_side_and_sum_to_m():
    prefixes = np.array([1, 5, 2, 3, 40, 7, 1, 8])
    suffixes = np.array([9, 5, 1, 3, 2, 100, 1, 8])
    band, w = block_class_weights(prefixes, suffixes, 1.0)
    assert band.tolist() == [0, 2, 0, 1, 1, 2, 0, 3]   # min 1, 5, 1, 3, 2, 7, 1, 8
    sizes = np.bincount(band, weights=prefixes * suffixes).astype(np.int64)
    m = int((prefixes * suffixes).sum())
    total = sum(Fraction(int(a)) * Fraction(b) for a, b in zip(sizes, w.tolist()))
    assert total <= m and total >= m * (1 - Fraction(1, 10 ** 6))
    assert (np.diff(w) < 0).all()
    assert w[1] / w[0] == pytest.approx(1 / math.sqrt(2 * 3))   # mids 1, √6, √28, √120


def test_block_classes_count_every_candidate_once():
    from dp_vocab.data.token_corpus import BlockClasses, CandidateJoin, block_shape
    # blocks (middle token): a 2 × 1, b 4 × 3, c 1 × 2: classes 0, 1, 0
    prev = sorted([("a", "b"), ("b", "c"), ("b", "a"), ("c", "a"), ("c", "b"), ("b", "b"),
                   ("d", "b")])
    join = CandidateJoin(prev)
    prefixes, suffixes = block_shape(join)
    band, w = block_class_weights(prefixes, suffixes, 1.0)
    classes = BlockClasses(join, band, w.size)
    members = [(i, j) for i, g in enumerate(prev) for j, h in enumerate(prev) if g[1:] == h[:-1]]
    assert join.size == len(members) == classes.sizes.sum()
    middle = {k: len({i for i, _ in members if prev[i][1:] == (k,)}) for k in "abc"}
    after = {k: len({j for _, j in members if prev[j][:-1] == (k,)}) for k in "abc"}
    want = [int(np.frexp(float(min(middle[prev[i][1]], after[prev[i][1]])))[1] - 1)
            for i, _ in members]
    keys = np.array([i * len(prev) + j for i, j in members])
    assert classes.class_of(keys).tolist() == want and set(want) == {0, 1}
    assert classes.sizes.tolist() == [2 * 1 + 1 * 2, 4 * 3]


@pytest.mark.slow
def test_block_class_sample_is_uniform_over_the_class_less_the_held():
    """Two draws from a block class spanning four blocks (middles a, c, x, y: 2 × 2 each; the
    blocks of b and z, 1 × 1, are another class) with one key excluded: every pair of the
    remaining 15 members equally likely (χ², rejected at p < 1e-6)."""
    from itertools import combinations
    from dp_vocab.data.token_corpus import BlockClasses, CandidateJoin, block_shape
    prev = sorted([("x", "a"), ("y", "a"), ("a", "x"), ("a", "y"), ("x", "c"), ("y", "c"),
                   ("c", "x"), ("c", "y"), ("z", "b"), ("b", "z")])
    join = CandidateJoin(prev)
    prefixes, suffixes = block_shape(join)
    band, w = block_class_weights(prefixes, suffixes, 1.0)
    classes = BlockClasses(join, band, w.size)
    members = [prev[i] + prev[j][-1:] for i, g in enumerate(prev) for j, h in enumerate(prev)
               if g[1:] == h[:-1] and g[1] in "acxy"]
    cls = int(classes.class_of(np.array([join.key_of(members[0])]))[0])
    assert classes.sizes[cls] == len(members) == 16 and classes.sizes.sum() == 18
    exclude = np.array([join.key_of(members[0])], dtype=np.int64)
    cells = {frozenset(p): i for i, p in enumerate(combinations(members[1:], 2))}
    rng = RandomSource(32)
    observed = np.zeros(len(cells))
    runs = 100 * len(cells)
    for _ in range(runs):
        observed[cells[frozenset(classes.sample(2, cls, exclude, rng))]] += 1
    assert pooled_chi2_pvalue(observed, np.full(len(cells), runs / len(cells))) > 1e-6


def test_strong_candidates_are_released_and_a_global_null_rarely_anything():
    rng = RandomSource(3)
    for lam in (None, 0.5):
        mask, z = level_bh(np.full(20, 1e3), 10_000, 1.0, 0.01, rng, adaptive_lambda=lam)
        assert mask.all() and z < 20
    # global null, m = 10^7: P(anything) = q (Simes); 100 runs at q = 1e-4
    hits = sum(level_bh(np.zeros(0), 10 ** 7, 1.0, 1e-4, rng)[1] > 0 for _ in range(100))
    assert hits <= 3   # Binomial(100, 1e-4): P(≥ 4) < 5e-9


def test_critical_values_are_below_their_bounds_and_non_decreasing():
    m, q, total, r = 10 ** 8 + 7, 0.012, 0.0025, 12_345
    prev = 0.0
    for k in [1, 2, 3, 10, 999, 12_345, 10 ** 6, m]:
        c = critical_value(k, m, q, total, r)
        assert Fraction(c) <= Fraction(q) * k / m and Fraction(c) <= Fraction(total) * (k + r) / m
        assert c >= prev
        prev = c
        ca = critical_value(k, m, q, None, 0, pi_hat=0.6, lam=0.5)
        assert ca <= 0.5 and Fraction(ca) <= Fraction(q) * k / (m * Fraction(0.6))
        for w in (1e-9, 0.37, 3.0, 98_066.953):   # a class weight (§3d)
            cw = critical_value(k, m, q, total, r, weight=w)
            x = min(Fraction(q) * k, Fraction(total) * (k + r))
            assert cw <= 1.0 and Fraction(cw) <= Fraction(w) * x / m
            cw = critical_value(k, m, q, None, 0, pi_hat=0.6, lam=0.5, weight=w)
            assert cw <= 0.5 and Fraction(cw) <= Fraction(w) * Fraction(q) * k / (m * Fraction(0.6))


@pytest.mark.parametrize("total, charged, levels", [(0.01, 0.008, 4), (0.01, 0.0, 4),
                                                    (0.3, 0.1, 7), (0.5, 0.0, 1)])
def test_total_shares_spend_at_most_the_remainder(total, charged, levels):
    shares = total_shares(total, charged, levels)
    assert len(shares) == levels and all(s > 0 for s in shares)
    assert sum(Fraction(s) for s in shares) <= Fraction(total) - Fraction(charged)
    assert shares[-1] >= shares[0] * (1 - 1e-9)   # the last level takes the rest


@pytest.mark.slow
def test_binomial_half_is_exact():
    """Set bits of n random bits against Binomial(n, ½), n small, not a multiple of 64 and
    beyond one chunk of 2^26 bits: χ² with cells below 50 pooled, rejected at p < 1e-6."""
    from scipy import stats
    src = RandomSource(20261126)
    for n, runs, bins in [(1, 2000, 25), (37, 4000, 25), (64 * 3 + 5, 4000, 25),
                          ((1 << 26) + 99, 120, 3)]:
        x = np.array([binomial_half(n, src) for _ in range(runs)])
        lo, hi = stats.binom.ppf([1e-3, 1 - 1e-3], n, 0.5).astype(np.int64)
        edges = np.unique(np.linspace(lo, hi + 1, bins).astype(np.int64))
        cdf = stats.binom.cdf(edges - 1, n, 0.5)
        expected = np.diff(np.concatenate([[0.0], cdf[1:-1], [1.0]])) * runs
        observed = np.diff(np.searchsorted(np.sort(x), np.concatenate(
            [[np.iinfo(np.int64).min], edges[1:-1], [np.iinfo(np.int64).max]])))
        assert 0 <= x.min() and x.max() <= n
        assert pooled_chi2_pvalue(observed, expected) > 1e-6, (n, observed, expected)


# ---- parameters -----------------------------------------------------------------------------------

BASE = {"epsilon": 3.0, "delta": 1e-5}


@pytest.mark.parametrize("kw, field", [
    ({"level_fdr": 0.012, "level_fdr_lambda": 0.3}, "level_fdr_lambda"),
    ({"level_fdr": 0.012, "level_fdr_lambda": 0.25}, "level_fdr_lambda"),
    ({"level_fdr": 0.012, "level_fdr_lambda": True}, "level_fdr_lambda"),
    ({"level_fdr": 0.012, "level_fdr_lambda": "0.5"}, "level_fdr_lambda"),
    ({"level_fdr_lambda": 0.5}, "level_fdr_lambda"),
    ({"total_fdr": 0.01}, "total_fdr"),
    ({"level_fdr": 0.0}, "level_fdr"),
    ({"level_fdr": 0.6}, "level_fdr"),
    ({"level_fdr": math.nan}, "level_fdr"),
    ({"level_fdr": 0.012, "total_fdr": 1.0}, "total_fdr"),
])
def test_level_fdr_parameters_are_refused_before_any_data(kw, field):
    with pytest.raises(ParameterError) as e:
        make_mechanism("dpne", **BASE, **kw)
    assert e.value.name == field and "expected" in str(e.value) and "got" in str(e.value)


@pytest.mark.parametrize("kw", [
    {"level2_rank_power": 1.0},                        # without level_fdr
    {"level_fdr": 0.01, "level2_rank_power": 0.0},
    {"level_fdr": 0.01, "level2_rank_power": 2.5},
    {"level_fdr": 0.01, "level2_rank_power": -1.0},
    {"level_fdr": 0.01, "level2_rank_power": True},
    {"level_fdr": 0.01, "level2_rank_power": "1"},
    {"level_fdr": 0.01, "level2_rank_power": math.nan},
])
def test_class_powers_are_refused_before_any_data(kw):
    with pytest.raises(ParameterError) as e:
        make_mechanism("dpne_public", **BASE, public_items=["a", "b"], **kw)
    assert e.value.name == "level2_rank_power" and "expected" in str(e.value)
    block = {("level_block_power" if k == "level2_rank_power" else k): v for k, v in kw.items()}
    for name in ("dpne", "dpne_public"):
        with pytest.raises(ParameterError) as e:
            make_mechanism(name, **BASE, public_items=["a", "b"], **block) if name != "dpne" \
                else make_mechanism(name, **BASE, **block)
        assert e.value.name == "level_block_power" and "expected" in str(e.value)
    with pytest.raises(ParameterError, match="level2_rank_power"):   # dpne has no ranks
        make_mechanism("dpne", **BASE, level_fdr=0.01, level2_rank_power=1.0)


def test_class_powers_are_recorded_as_data():
    m = make_mechanism("dpne_public", **BASE, public_items=["a", "b"], level_fdr=0.01,
                       level_fdr_lambda=0.5, level2_rank_power=1.0, level_block_power=0.5)
    assert m.params()["level2_rank_power"] == 1.0 and m.params()["level_block_power"] == 0.5
    assert "weighted Benjamini-Hochberg" in m.privacy()["level2_weights"]
    assert "min(prefixes, suffixes)" in m.privacy()["level_block_weights"]
    plain = make_mechanism("dpne_public", **BASE, public_items=["a", "b"], level_fdr=0.01)
    assert not {"level2_rank_power", "level_block_power"} & set(plain.params())
    assert not {"level2_weights", "level_block_weights"} & set(plain.privacy())


def test_total_fdr_must_exceed_what_a_public_level_one_spends():
    with pytest.raises(ParameterError, match="total_fdr.*public_fdr") as e:
        make_mechanism("dpne_public", **BASE, public_items=["a", "b"], level_fdr=0.012,
                       total_fdr=0.008)
    assert e.value.fix
    m = make_mechanism("dpne_public", **BASE, public_items=["a", "b"], level_fdr=0.012,
                       total_fdr=0.01, max_n=3)
    assert m.level1_fdr == 0.008 and sum(m.level_total_fdrs) <= 0.002


def test_level_fdr_is_recorded_as_data():
    m = make_mechanism("dpne", **BASE, level_fdr=0.012, level_fdr_lambda=0.5, total_fdr=0.01,
                       max_n=3)
    assert m.params()["level_fdr"] == 0.012 and m.params()["level_fdr_lambda"] == 0.5
    assert m.params()["total_fdr"] == 0.01
    privacy = m.privacy()
    assert "Benjamini-Hochberg at false-discovery rate 0.012" in privacy["level_release"]
    assert len(privacy["level_total_fdrs"]) == 2
    plain = make_mechanism("dpne", **BASE)
    assert "level_fdr" not in plain.params() and "level_release" not in plain.privacy()


# ---- a release ------------------------------------------------------------------------------------

def _domain_corpus():
    """Many users sharing one text, and a few with a rare phrase each: (corpus, extractor)."""
    from dp_vocab.ingest.extract import extract_sequences
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    docs = [(f"u{i}", "the cat sat on the mat . the dog sat on the log .") for i in range(300)]
    docs += [(f"v{i}", f"a rare phrase number {i} here") for i in range(50)]
    extractor = ItemExtractor(RegexTokenizer())
    return extract_sequences(docs, extractor), extractor


def _assert_in_candidate_domain(rel) -> None:
    """Every released n-gram's prefix and suffix are released one level down, the per-level
    counts add up, and the strong n-grams pass."""
    items = set(rel.items)
    for g in items:
        toks = g.split(" ")
        if len(toks) > 1:
            assert " ".join(toks[:-1]) in items and " ".join(toks[1:]) in items
    assert sum(lv["released"] for lv in rel.details["levels"]) == len(rel.items)
    assert {"the cat", "cat sat", "the cat sat on"} <= items


def test_bh_levels_release_members_of_the_candidate_domain():
    """Every released n-gram has its prefix and suffix released one level down (the zero-weight
    ones are uniform members of C_n), the per-level counts add up, and strong n-grams pass."""
    corpus, _ = _domain_corpus()
    m = make_mechanism("dpne", epsilon=4, delta=1e-5, max_n=4, max_items_per_user=20,
                       level_fdr=0.3, level_fdr_lambda=0.5, policy="l2_descent")
    _assert_in_candidate_domain(m.release(corpus, random=RandomSource(5)))


@pytest.mark.parametrize("name", ["dpne", "dpne_public"])
def test_weighted_levels_release_members_of_the_candidate_domain(name):
    """Level 2 by rank-class weighted BH (dpne_public) and levels n ≥ 3 by block-class
    weighted BH: every released n-gram's prefix and suffix are released one level down, the
    counts add up, strong n-grams pass."""
    corpus, extractor = _domain_corpus()
    public = ["the", ".", "on", "a", "cat", "dog", "sat", "number", "here", "mat", "log"]
    for seed in range(3):
        extra = {"public_items": public, "level2_rank_power": 1.0} if name != "dpne" else {}
        m = make_mechanism(name, epsilon=4, delta=1e-5, max_n=4, max_items_per_user=20,
                           level_fdr=0.3, level_fdr_lambda=0.5, level_block_power=1.0,
                           policy="l2_descent", **extra).for_extractor(extractor)
        _assert_in_candidate_domain(m.release(corpus, random=RandomSource(seed)))
