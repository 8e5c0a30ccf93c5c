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
from dp_vocab.mechanisms.level_fdr import critical_value, level_bh, total_shares
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
    cells = sorted(set(ours) | set(ref))
    a = np.array([sum(1 for o in ours if o == c) for c in cells], dtype=float)
    count = Counter(ref)
    b = np.array([count[c] for c in cells], dtype=float)
    # χ² homogeneity of the 2 × cells table; cells where ours expects < 50 under the pooled
    # law (a function of the column totals only) are merged into one
    small = (a + b) / 5 < 50
    for i in np.argsort(a + b, kind="stable"):   # and the next smallest, till it expects 50
        if (a + b)[small].sum() / 5 >= 50 or not small.any():
            break
        small[i] = True
    table = np.stack([a[~small], b[~small]], axis=1)
    if small.any():
        table = np.vstack([table, [a[small].sum(), b[small].sum()]])
    assert table.shape[0] >= 3
    p = chi2_contingency(table.T, correction=False).pvalue
    assert p > 1e-6, list(zip(cells, a, b))


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

def test_bh_levels_release_members_of_the_candidate_domain():
    """Every released n-gram has its prefix and suffix released one level down (the zero-weight
    ones are uniform members of C_n), the per-level counts add up, and strong n-grams pass."""
    from dp_vocab.ingest.extract import extract_sequences
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    docs = [(f"u{i}", "the cat sat on the mat . the dog sat on the log .") for i in range(300)]
    docs += [(f"v{i}", f"a rare phrase number {i} here") for i in range(50)]
    corpus = extract_sequences(docs, ItemExtractor(RegexTokenizer()))
    m = make_mechanism("dpne", epsilon=4, delta=1e-5, max_n=4, max_items_per_user=20,
                       level_fdr=0.3, level_fdr_lambda=0.5, policy="l2_descent")
    rel = m.release(corpus, random=RandomSource(5))
    items = set(rel.items)
    for g in items:
        toks = g.split(" ")
        if len(toks) > 1:
            assert " ".join(toks[:-1]) in items and " ".join(toks[1:]) in items
    assert sum(lv["released"] for lv in rel.details["levels"]) == len(rel.items)
    assert {"the cat", "cat sat", "the cat sat on"} <= items
