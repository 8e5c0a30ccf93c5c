"""The public candidate domain (mechanisms/public.md): per-item cutoffs, the BH draws, the list."""

import gzip
import itertools
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.errors import CorpusError, ParameterError
from dp_vocab.data.itemsets import item_hashes
from dp_vocab.mechanisms import _kernels
from dp_vocab.mechanisms.public_list import LATER_SYMBOLS_AT, PublicDomain
from dp_vocab.mechanisms.weighted_bh import band_weights, weighted_bh
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.registry import hf_pre_tokenizer, item_extractor, regex_tokenizer

from chi_square import pooled_chi2_pvalue

# ---- per-item cutoffs --------------------------------------------------------------------------


def l2_descent_reference(rows, order, gammas):
    """Plain Python, straight from public.md §1."""
    hist = [0.0] * len(gammas)
    for r in order:
        below = [u for u in rows[r] if hist[u] < gammas[u]]
        z = math.sqrt(sum((gammas[u] - hist[u]) ** 2 for u in below))
        for u in below:
            hist[u] = gammas[u] if z <= 1 else hist[u] + (gammas[u] - hist[u]) / z
    return np.array(hist)


def csr(rows):
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    items = np.array([u for r in rows for u in r], dtype=np.int32)
    return indptr, items


N_ITEMS = 8
row_sets = st.lists(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=6), min_size=1,
                    max_size=10)
cutoffs = st.lists(st.floats(0.05, 3.0), min_size=N_ITEMS, max_size=N_ITEMS)


@settings(max_examples=150, deadline=None)
@given(rows=row_sets, gammas=cutoffs, data=st.data())
def test_per_item_cutoffs_contract_on_neighbours(rows, gammas, data):
    """‖H(D) − H(D′)‖₂ ≤ 1 for the same order (D′ = D without user x), per-item caps respected,
    the kernel equals the reference, and X's unique items outside a chosen 'public' subset
    (those sharing the largest cutoff class, as in the mechanism) weigh ≤ 1/√t."""
    order = np.array(data.draw(st.permutations(range(len(rows)))), dtype=np.int64)
    x = data.draw(st.integers(0, len(rows) - 1))
    g = np.array(gammas)
    indptr, items = csr(rows)
    h = _kernels.l2_descent_cutoffs(order, indptr, items, N_ITEMS, g)
    assert np.allclose(h, l2_descent_reference(rows, order.tolist(), g), atol=1e-12)
    rows_p = [r if i != x else [] for i, r in enumerate(rows)]   # X's row emptied: same order
    hp = _kernels.l2_descent_cutoffs(order, *csr(rows_p), N_ITEMS, g)
    assert np.linalg.norm(h - hp) <= 1 + 1e-9
    assert np.all(h <= g + 1e-12) and np.all(h >= 0)
    held = {u for r in rows for u in r}
    assert set(np.flatnonzero(h > 0).tolist()) == held   # every held item gets weight
    # lone items of X that share one cutoff value Γ_B (the non-public class)
    others = {u for i, r in enumerate(rows) if i != x for u in r}
    gamma_b = data.draw(st.floats(0.05, 3.0))
    lone = [u for u in rows[x] if u not in others]
    g2 = g.copy()
    g2[lone] = gamma_b
    h2 = _kernels.l2_descent_cutoffs(order, indptr, items, N_ITEMS, g2)
    for u in lone:
        assert h2[u] <= 1 / math.sqrt(len(lone)) + 1e-12


def test_uniform_cutoffs_equal_the_uniform_kernel():
    rng = np.random.default_rng(3)
    rows = [sorted(rng.choice(50, size=rng.integers(1, 12), replace=False).tolist())
            for _ in range(300)]
    indptr, items = csr(rows)
    order = rng.permutation(len(rows)).astype(np.int64)
    a = _kernels.l2_descent(order, indptr, items, 50, 1.7)
    b = _kernels.l2_descent_cutoffs(order, indptr, items, 50, np.full(50, 1.7))
    assert np.array_equal(a, b)


def test_translation_identity_of_per_item_cutoffs():
    """H(Γ) − Γ does not depend on Γ for items every row holds below cutoff... checked through
    the conjugation: shifting all cutoffs by a constant on a single user's items moves its
    final weights by the same constant when it fills them (z ≤ 1)."""
    indptr, items = csr([[0, 1, 2]])
    order = np.array([0], dtype=np.int64)
    g = np.array([0.2, 0.3, 0.4])
    h = _kernels.l2_descent_cutoffs(order, indptr, items, 3, g)
    assert np.array_equal(h, g)                       # ‖g‖ ≤ 1: filled exactly
    g = np.array([1.0, 2.0, 2.0])
    h = _kernels.l2_descent_cutoffs(order, indptr, items, 3, g)
    assert np.allclose(h, g / 3.0) and np.isclose(np.linalg.norm(h), 1.0)


# ---- weighted BH ---------------------------------------------------------------------------------


def test_bh_releases_items_far_above_every_threshold_and_never_zero_weight_ones():
    H = np.array([1e6, 1e6, 1e6, 0.0, 1e6])
    w = np.array([1.0, 1.0, 1.0, 1.0, 0.0]) * 5 / 4
    for seed in range(20):
        out = weighted_bh(H, w, 1.0, 0.1, RandomSource(seed))
        assert out[:3].all() and not out[4]


def test_bh_all_nulls_tiny_rate_and_empty_weights():
    rng = RandomSource(1)
    assert not weighted_bh(np.zeros(5), np.zeros(5), 1.0, 0.1, rng).any()
    hits = sum(weighted_bh(np.zeros(1000), np.ones(1000), 1.0, 1e-9, rng).any()
               for _ in range(200))
    assert hits == 0   # P(any) = q = 1e-9 per run (Simes): 200 runs see none w.p. 1 − 2e-7


def bh_reference(p, w, q):
    """Weighted BH on explicit p-values: sort p/w, largest k with (p/w)_(k) ≤ qk/m."""
    m = p.size
    ratio = np.where(w > 0, p / np.where(w > 0, w, 1), np.inf)
    srt = np.sort(ratio)
    ok = np.flatnonzero(srt <= q * np.arange(1, m + 1) / m)
    if ok.size == 0:
        return np.zeros(m, dtype=bool)
    return ratio <= srt[ok[-1]]


@pytest.mark.slow
def test_bh_draws_have_the_law_of_bh_on_noisy_values():
    """Release frequency of each item by ``weighted_bh`` vs weighted BH applied to explicit
    Gaussian noise (float noise: fine in a test). Two-proportion z-tests at 1e-6/m each
    (Bonferroni): a correct implementation fails with probability ≤ 1e-6."""
    from scipy.stats import norm
    H = np.array([0, 0, 0, 0, 0, 0, 2.0, 2.5, 3.0, 3.5, 4.0, 6.0, 0, 0, 1.0, 0])
    w = np.array([4, 4, 1, 1, 0.25, 0.25, 4, 1, 1, 0.25, 1, 1, 1, 2, 2, 0.5])
    w = w * (w.size / w.sum())
    sigma, q, n = 1.3, 0.2, 20_000
    rng = RandomSource()
    ours = np.zeros(H.size)
    for _ in range(n):
        ours += weighted_bh(H, w, sigma, q, rng)
    gen = np.random.default_rng()
    ref = np.zeros(H.size)
    for _ in range(n):
        y = H + sigma * gen.standard_normal(H.size)
        ref += bh_reference(norm.sf(y / sigma), w, q)
    p1, p2 = ours / n, ref / n
    pooled = (ours + ref) / (2 * n)
    se = np.sqrt(np.maximum(pooled * (1 - pooled), 1e-12) * 2 / n)
    z = np.abs(p1 - p2) / se
    assert np.all(z < norm.isf(1e-6 / (2 * H.size))), list(zip(p1, p2))
    assert p1[4] < p1[0]   # lower weight, lower rate for zero-weight items


@pytest.mark.slow
@pytest.mark.parametrize("others", [0, 40])
def test_bh_false_discovery_share_is_q_times_null_weight(others):
    """Items far above every threshold (always rejected) plus nulls, and ``others`` discoveries
    made outside the list: E[V/(R + others)] = q·Σ_null w/m exactly when no c_x(k) reaches 1
    (public.md §5). Hoeffding at 2e-6: the share is in [0, 1], so the mean of n runs is within
    t = sqrt(ln(1e6)/(2n)) of it except with probability 2e-6 (each case)."""
    m1, m0, q, n = 30, 170, 0.2, 10_000
    H = np.concatenate([np.full(m1, 1e6), np.zeros(m0)])
    w = np.concatenate([np.full(m1, 2.0), np.full(m0, 1.0)])
    w = w * (w.size / w.sum())
    expect = q * w[m1:].sum() / w.size
    rng = RandomSource()
    shares = []
    for _ in range(n):
        out = weighted_bh(H, w, 1.0, q, rng, other_discoveries=others)
        shares.append(out[m1:].sum() / max(out.sum() + others, 1))
    t = math.sqrt(math.log(1e6) / (2 * n))
    assert abs(np.mean(shares) - expect) < t, (np.mean(shares), expect)


@pytest.mark.slow
def test_bh_all_nulls_release_something_with_probability_q():
    """Global null, independent uniform p-values: P(R > 0) = q (Simes 1986), weights of mean 1
    with w·q < 1 included. Exact binomial test at 1e-6."""
    from scipy.stats import binomtest
    w = np.array([3.0, 1.0, 0.5, 0.5] * 10)
    w = w * (w.size / w.sum())
    q, n = 0.1, 20_000
    rng = RandomSource()
    hits = sum(bool(weighted_bh(np.zeros(w.size), w, 2.0, q, rng).any()) for _ in range(n))
    assert binomtest(hits, n, q).pvalue > 1e-6, hits / n


# ---- adaptive weighted BH (public.md §9) ---------------------------------------------------------


def adaptive_bh_reference(p, w, q, lam, others=0):
    """Weighted Storey-type adaptive BH on explicit p-values, straight from public.md §9:
    π̂ = (max w + Σ w·1{p > λ})/(m(1 − λ)); reject p_x ≤ min(λ, w_x·(q/π̂)·(k* + r₀)/m)."""
    m = p.size
    pi_hat = (w.max() + w[p > lam].sum()) / (m * (1 - lam))
    level = q / pi_hat
    k_star = 0
    for k in range(m, 0, -1):
        c = np.minimum(w * level * (k + others) / m, lam)
        if np.sum((w > 0) & (p <= c)) >= k:
            k_star = k
            break
    c = np.minimum(w * level * (k_star + others) / m, lam)
    return (w > 0) & (p <= c) if k_star else np.zeros(m, dtype=bool)


def test_adaptive_bh_releases_strong_items_and_discards_p_above_lambda():
    H = np.array([1e6] * 4 + [0.0] * 4)
    w = np.array([1.0] * 8)
    for seed in range(20):
        out = weighted_bh(H, w, 1.0, 0.1, RandomSource(seed), adaptive_lambda=0.5)
        assert out[:4].all()
    # an item whose every critical value would exceed λ is still capped at λ: with q/π̂·w ≫ 1
    # the release rate of a null is P(p ≤ λ) = λ, never more
    rng = RandomSource(5)
    hits = sum(weighted_bh(np.array([1e6] * 30 + [0.0]), np.array([1.0] * 30 + [40.0]),
                           1.0, 0.5, rng, adaptive_lambda=0.05)[-1] for _ in range(400))
    assert hits < 50   # Binomial(400, 0.05): mean 20, P(≥ 50) < 1e-7


@pytest.mark.slow
@pytest.mark.parametrize("others", [0, 25])
def test_adaptive_bh_draws_have_the_law_of_adaptive_bh_on_noisy_values(others):
    """Release frequency of each item by ``weighted_bh(adaptive_lambda=λ)`` vs the reference
    applied to explicit Gaussian noise: two-proportion z-tests at 1e-6/m each (Bonferroni);
    a correct implementation fails with probability ≤ 1e-6 per case. Signals near the
    thresholds and λ = 0.3 make both the λ-draw and the conditional BH draws matter."""
    from scipy.stats import norm
    H = np.array([0, 0, 0, 0, 0, 0, 2.0, 2.5, 3.0, 3.5, 4.0, 6.0, 0, 0, 1.0, 0.5, 8, 8, 8, 8])
    w = np.array([4, 4, 1, 1, 0.25, 0.25, 4, 1, 1, 0.25, 1, 1, 1, 2, 2, 0.5, 1, 1, 1, 1])
    w = w * (w.size / w.sum())
    sigma, q, lam, n = 1.3, 0.2, 0.3, 20_000
    rng = RandomSource()
    ours = np.zeros(H.size)
    for _ in range(n):
        ours += weighted_bh(H, w, sigma, q, rng, other_discoveries=others, adaptive_lambda=lam)
    gen = np.random.default_rng()
    ref = np.zeros(H.size)
    for _ in range(n):
        y = H + sigma * gen.standard_normal(H.size)
        ref += adaptive_bh_reference(norm.sf(y / sigma), w, q, lam, others)
    p1, p2 = ours / n, ref / n
    pooled = (ours + ref) / (2 * n)
    se = np.sqrt(np.maximum(pooled * (1 - pooled), 1e-12) * 2 / n)
    z = np.abs(p1 - p2) / se
    assert np.all(z < norm.isf(1e-6 / (2 * H.size))), list(zip(p1, p2))


@pytest.mark.slow
@pytest.mark.parametrize("others", [0, 100])
def test_adaptive_bh_false_discovery_rate_is_at_most_q(others):
    """Few nulls with low weight (null weight share Σ_null w/m = 1/16) among strong and
    moderate signals: plain BH's rate is about q/16, adaptive BH's must be ≤ q (public.md §9)
    and well above plain BH's bound. Hoeffding: the share is in [0, 1], so the mean of n runs
    is within t = sqrt(ln(1e6)/(2n)) of its expectation except with probability 2e-6; the
    test fails falsely with probability ≤ 4e-6 per case (two one-sided checks)."""
    m1, m0, q, lam, n = 1200, 800, 0.2, 0.5, 6_000
    H = np.concatenate([np.full(m1 - 200, 1e6), np.linspace(1.0, 4.0, 200), np.zeros(m0)])
    w = np.concatenate([np.full(m1, 2.5), np.full(m0, 0.25)])
    w = w * (w.size / w.sum())
    null_share = w[m1:].sum() / w.size
    rng = RandomSource()
    shares = np.empty(n)
    for i in range(n):
        out = weighted_bh(H, w, 1.0, q, rng, other_discoveries=others, adaptive_lambda=lam)
        shares[i] = out[m1:].sum() / max(out.sum() + others, 1)
    t = math.sqrt(math.log(1e6) / (2 * n))
    assert shares.mean() <= q + t, (shares.mean(), q)
    assert shares.mean() >= 4 * q * null_share + t, (shares.mean(), q * null_share)


# ---- the list ------------------------------------------------------------------------------------


def test_domain_normalised_by_the_extractor_keeps_only_single_self_items():
    ex = item_extractor(regex_tokenizer())
    d = PublicDomain.load(["the", "Hello", "don't", "e.g", "a b", "the", "ﬁle", "x"], 100)
    assert d.items == ("the", "Hello", "don't", "e.g", "a b", "ﬁle", "x")   # distinct, ordered
    n = d.normalised_by(ex, 100)
    assert n.items == ("the", "don't", "x") and n.normalised
    assert n.normalised_by(ex, 2).items == ("the", "don't")
    desc = n.describe()
    assert desc["items"] == 3 and len(desc["sha256"]) == 64 and desc["normalised_by_item_extractor"]
    assert desc["sha256"] != d.describe()["sha256"]


def test_space_marking_pre_tokenizers_list_symbols_then_spaced_forms_and_parts():
    """Byte-level and metaspace items carry their space: the list holds the units of the
    first tier of public symbols, then " w"'s units (each part when there are several) before
    w's own (when the extractor keeps w as it is), and the later tier of symbols after
    ``LATER_SYMBOLS_AT`` entries; a regex extractor's list is unchanged."""
    d = PublicDomain.load(["the", "don't", "a b", "x"], 100)
    byte_level = item_extractor(hf_pre_tokenizer("byte_level"))
    n = d.normalised_by(byte_level, 10 ** 6).items
    k = n.index("Ġthe")
    # " don't" is "Ġdon" + "'t" and " a b" is "Ġa" + "Ġb": each part is a unit of public text
    assert n[k:k + 8] == ("Ġthe", "the", "Ġdon", "'t", "Ġa", "Ġb", "Ġx", "x")
    first, later = set(n[:k]), set(n[k + 8:])
    assert n[:4] == ("Ġ!", "!", 'Ġ"', '"')
    assert {"Ċ", "ĊĊ", "ĠĊ", "Ġ80", "80", "07"} <= first
    assert {"...", "Ġ--", "Ġ800", "Ġ2024"} <= later and not first & later
    assert len(set(n)) == len(n) and not any(u.splitlines() != [u] for u in n)
    assert d.normalised_by(byte_level, 3).items == ("Ġ!", "!", 'Ġ"')
    # a long list: the later tier starts at LATER_SYMBOLS_AT
    words = ["".join(t) for t in itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=3)]
    long = PublicDomain.load(words, 10 ** 6).normalised_by(byte_level, 10 ** 6).items
    assert long[LATER_SYMBOLS_AT - 1].lstrip("Ġ").isalpha() and long[LATER_SYMBOLS_AT] == "Ġ!!"
    metaspace = item_extractor(hf_pre_tokenizer("metaspace"))
    m = d.normalised_by(metaspace, 10 ** 6).items
    j = m.index("▁the")
    assert m[j:j + 5] == ("▁the", "▁don't", "▁a", "▁b", "▁x")
    assert {"▁!", "▁80"} <= set(m[:j]) and {"▁...", "▁2024"} <= set(m[j + 5:])
    regex = item_extractor(regex_tokenizer())
    assert d.normalised_by(regex, 100).items == ("the", "don't", "x")
    # an n-gram extractor's list holds neither the parts of a split word nor their n-grams
    pairs = item_extractor(hf_pre_tokenizer("byte_level"), n_max=2)
    p = d.normalised_by(pairs, 10 ** 6).items
    assert p[p.index("Ġthe"):p.index("Ġthe") + 4] == ("Ġthe", "the", "Ġx", "x")


def test_a_metaspace_list_holds_each_word_with_a_comma_and_full_stop_twenty_times_lower():
    """Metaspace keeps a word's trailing mark in its unit: each entry of letters at position i
    also stands for "▁w," and "▁w.", entered after position 20·i (about one word in 20 is
    followed by each); pre-tokenizers that split the mark off get no such entries."""
    words = ["".join(t) for t in itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=3)]
    d = PublicDomain.load(words, 10 ** 6)
    m = d.normalised_by(item_extractor(hf_pre_tokenizer("metaspace"), lowercase=False),
                        10 ** 6).items
    assert len(set(m)) == len(m)
    kept = [u for u in m if u[-1:] not in (",", ".") or not u[1:-1].isalpha()]
    for w in ("▁aaa", "▁Aaa", "▁aab", "▁abc"):
        i = kept.index(w)
        for form in (w + ",", w + "."):
            j = m.index(form)
            # after the entry at 20·i of the list without these forms, before the next one
            assert m.index(kept[20 * i]) < j < m.index(kept[20 * i + 1])
    assert "▁aaa;" not in m and "▁aaa,." not in m
    # the list ends first for the entries after position len/20
    emitted = [u for u in kept[:(len(kept) - 1) // 20 + 1] if u[1:].isalpha()]
    assert [u for u in m if u.endswith(",") and u[1:-1].isalpha()] == [u + "," for u in emitted]
    # an extractor that makes nothing of " a" has no space mark to read: no forms, no error
    two = item_extractor(regex_tokenizer(r"\w\w+"))
    assert "the" in PublicDomain.load(["the", "a"], 10).normalised_by(two, 10 ** 6).items
    # a form the extractor cannot make as one item (too long) is left out
    short = d.normalised_by(item_extractor(hf_pre_tokenizer("metaspace"), lowercase=False,
                                           max_length=4), 10 ** 6).items
    assert "▁aaa" in short and not any(u[-1] in ",." and u[1:-1].isalpha() for u in short)
    for extractor in (item_extractor(hf_pre_tokenizer("byte_level")),   # marks split off
                      item_extractor(regex_tokenizer())):               # no space marks
        assert not any(u.rstrip(",.") != u and u.rstrip(",.").lstrip("Ġ").isalpha()
                       for u in d.normalised_by(extractor, 10 ** 6).items)


def test_domain_from_files_and_wordfreq(tmp_path):
    p = tmp_path / "list.tsv.gz"
    with gzip.open(p, "wt", encoding="utf-8") as f:
        f.write("the\t100\ncat\t50\n\nthe\t3\nsat\n")
    assert PublicDomain.load(str(p), 10).items == ("the", "cat", "sat")
    assert PublicDomain.load(str(p), 2).items == ("the", "cat")
    wf = PublicDomain.load("wordfreq:en", 1000)
    assert len(wf.items) == 1000 and wf.items[0] == "the"
    with pytest.raises(CorpusError, match="not found"):
        PublicDomain.load(str(tmp_path / "missing.txt"), 10)
    with pytest.raises(ParameterError, match="public_items"):
        PublicDomain.load("wordfreq:xx-nope", 10)
    with pytest.raises(ParameterError, match="public_items"):
        PublicDomain.load(42, 10)


def test_band_weights_have_mean_one_and_follow_rank():
    w = band_weights(25, ((10, 4.0), (20, 1.0), (30, 0.0)))
    assert w.size == 25 and w.mean() == pytest.approx(1.0)
    assert (w[:10] == w[0]).all() and w[0] == pytest.approx(4 * w[10]) and (w[20:] == 0).all()


@pytest.mark.parametrize("name", ["policy_gaussian_public", "dp_sips_public"])
def test_parameters_are_checked(name):
    base = dict(epsilon=3.0, delta=1e-5, public_items=["a", "b"])
    for field, bad in (("public_fdr", 0), ("public_fdr", 0.7), ("public_fdr", True),
                       ("public_bands", []), ("public_bands", [[10, 1], [5, 1]]),
                       ("public_bands", [[10, -1]]), ("public_bands", [[10, 0]]),
                       ("public_bands", "x"), ("public_bands", [[10.5, 1]]),
                       ("public_adaptive", 1), ("public_adaptive", "yes"),
                       ("public_lambda", 0), ("public_lambda", 1.0), ("public_lambda", True)):
        with pytest.raises(ParameterError, match=field):
            make_mechanism(name, **{**base, field: bad})
    if name == "policy_gaussian_public":
        with pytest.raises(ParameterError, match="public_cutoff"):
            make_mechanism(name, **base, public_cutoff=-10.0)


@pytest.mark.parametrize("name", ["policy_gaussian_public", "dp_sips_public"])
def test_record_names_the_list_never_its_held_items(name):
    m = make_mechanism(name, epsilon=3.0, delta=1e-5, public_items=["a", "b", "zz"],
                       public_bands=[[2, 1.0], [3, 0.5]])
    d = ItemSets.from_user_items([(f"u{i}", ["a", "q"]) for i in range(50)])
    rel = m.release(d, random=RandomSource(seed=4))
    rec = rel.to_privacy_record()
    text = repr(rec)
    assert "'zz'" not in text and "'b'" not in text   # list content appears only as a hash
    assert rec["parameters"]["public_items"] == "list of 3 public items"
    assert rel.privacy["public_domain"]["items"] == 3
    assert set(rel.items) <= {"a", "b", "zz", "q"}


def test_recipe_normalises_the_list_with_its_extractor(tmp_path):
    from dp_vocab.recipes import run_recipe
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join('{"user": "u%d", "text": "the cat"}\n' % i for i in range(30)))
    recipe = {"run": {"seed": 1, "key": None},
              "corpus": {"@readers": "dp_vocab.jsonl.v1", "path": str(corpus)},
              "items": {"@extractors": "dp_vocab.items.v1",
                        "tokenizer": {"@tokenizers": "dp_vocab.regex.v1"}},
              "mechanism": {"@mechanisms": "dp_vocab.policy_gaussian_public.v1",
                            "epsilon": 3.0, "delta": 1e-5,
                            "public_items": ["the", "Cat", "cat", "e.g"]}}
    res = run_recipe(recipe, tmp_path / "out")
    dom = res.record["privacy"]["public_domain"]
    assert dom["items"] == 2 and dom["normalised_by_item_extractor"]


def _bh_joint_law(H, w, sigma, q, r0):
    """Exact law of the released set of weighted BH: enumerate every K_x (the first step at which
    item x is rejected) from the closed-form F_x(k) = Φ(H_x/σ + Φ⁻¹(c_x(k)))."""
    import itertools

    from scipy.stats import norm
    m = len(H)
    never = m + 1
    per_item = []
    for x in range(m):
        F = [0.0] + [0.0 if w[x] == 0 else float(norm.cdf(
            H[x] / sigma + norm.ppf(min(1.0, w[x] * q * (k + r0) / m)))) for k in range(1, m + 1)]
        law = {k: F[k] - F[k - 1] for k in range(1, m + 1)}
        law[never] = 1.0 - F[m]
        per_item.append(law)
    out: dict = {}
    for ks in itertools.product(*(list(d) for d in per_item)):
        p = math.prod(per_item[x][ks[x]] for x in range(m))
        if p > 0:
            k_star = max(k for k in range(m + 1) if sum(K <= k for K in ks) >= k)
            chosen = tuple(x for x in range(m) if ks[x] <= k_star)
            out[chosen] = out.get(chosen, 0.0) + p
    return out


@pytest.mark.slow
@pytest.mark.parametrize("H, w, q, r0", [
    ([0.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.5, 0.5], 0.5, 0),
    ([2.0, 0.0, 1.0, 0.0], [1.5, 1.0, 0.5, 1.0], 0.4, 2),
    ([3.0, 2.5, 0.5, 0.0, 0.0], [0.0, 2.0, 1.0, 1.0, 1.0], 0.3, 1),   # a held item with w = 0
    ([0.5, 0.5, 0.0, 0.0, 0.0], [4.0, 1.0, 0.0, 0.0, 0.0], 0.5, 0),   # c_x(k) reaches 1
])
def test_weighted_bh_joint_law_by_enumeration(H, w, q, r0):
    """The sampler's joint law of released sets equals BH's, outcome by outcome: χ² over the
    outcomes, those expecting fewer than 50 pooled (``chi_square``), rejected at p < 1e-6
    (false-failure rate ~1e-6 per case), and no outcome BH cannot produce."""
    law = _bh_joint_law(H, w, 1.0, q, r0)
    rs, n, seen = RandomSource(20261123), 20_000, {}
    h, wa = np.array(H), np.array(w)
    for _ in range(n):
        s = tuple(np.flatnonzero(weighted_bh(h, wa, 1.0, q, rs, other_discoveries=r0)).tolist())
        seen[s] = seen.get(s, 0) + 1
    assert set(seen) <= set(law)
    observed = [seen.get(s, 0) for s in law]
    expected = [n * p for p in law.values()]
    assert sum(e >= 50 for e in expected) >= 2
    assert pooled_chi2_pvalue(observed, expected) > 1e-6


def test_normalised_list_is_kept_on_disk_and_read_back_exactly(tmp_path, monkeypatch):
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "list.txt"
    src.write_text("the\nHello\ndon't\ne.g\nﬁle\nx\ncat\n", encoding="utf-8")
    ex = item_extractor(regex_tokenizer())
    fresh = PublicDomain.load(str(src), 100).normalised_by(ex, 100)
    calls = []

    def raw():
        calls.append(1)
        return PublicDomain.load(str(src), 100)

    first = PublicDomain.normalised_from(str(src), ex, 100, raw)
    again = PublicDomain.normalised_from(str(src), ex, 100, raw)
    assert first == fresh and again == fresh and len(calls) == 1      # second read from disk
    assert again.describe() == fresh.describe()
    assert again.hashes.dtype == np.uint64 and (again.hashes == item_hashes(fresh.items)).all()
    # another extractor, limit or list: another entry, computed afresh
    upper = item_extractor(regex_tokenizer(), lowercase=False)
    assert PublicDomain.normalised_from(str(src), upper, 100, raw) == \
        PublicDomain.load(str(src), 100).normalised_by(upper, 100) and len(calls) == 2
    assert PublicDomain.normalised_from(str(src), ex, 2, raw).items == ("the", "don't")
    src.write_text("dog\ncat\n", encoding="utf-8")
    assert PublicDomain.normalised_from(str(src), ex, 100, raw).items == ("dog", "cat")
    # a damaged entry is recomputed, never used
    (entry,) = [p for p in (tmp_path / "cache" / "public").iterdir()
                if p.read_bytes().endswith(b"dog\ncat")]
    entry.write_bytes(entry.read_bytes() + b"\nmouse")
    n = len(calls)
    assert PublicDomain.normalised_from(str(src), ex, 100, raw).items == ("dog", "cat")
    assert len(calls) == n + 1
    data = bytearray(entry.read_bytes())                     # rewritten
    data[data.index(b"\n") + 3] ^= 1                          # one hash damaged
    entry.write_bytes(bytes(data))
    again = PublicDomain.normalised_from(str(src), ex, 100, raw)
    assert len(calls) == n + 2 and (again.hashes == item_hashes(["dog", "cat"])).all()
    entry.write_bytes(entry.read_bytes()[:40])               # cut short
    assert PublicDomain.normalised_from(str(src), ex, 100, raw).items == ("dog", "cat")
    assert len(calls) == n + 3
    # an in-memory list is not kept; an unwritable cache is not an error
    assert PublicDomain.normalised_from(["a", "B"], ex, 10, lambda: PublicDomain.load(
        ["a", "B"], 10)).items == ("a",)
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(blocker))
    assert PublicDomain.normalised_from(str(src), ex, 100, raw).items == ("dog", "cat")


def test_mechanism_loads_the_raw_list_only_when_asked(monkeypatch):
    from dp_vocab.mechanisms import public_list as public
    calls = []
    real = public._wordfreq_list

    def counting(lang):
        calls.append(lang)
        return real(lang)

    monkeypatch.setattr(public, "_wordfreq_list", counting)
    ex = item_extractor(regex_tokenizer())
    make_mechanism("policy_gaussian_public", epsilon=3.0, delta=1e-5).for_extractor(ex)
    calls.clear()                  # the session's cache now holds the normalised list
    m = make_mechanism("policy_gaussian_public", epsilon=3.0, delta=1e-5)
    norm = m.for_extractor(ex)
    assert calls == [] and norm.domain.normalised and len(norm.domain.items) > 300_000
    assert not m.domain.normalised and calls == ["en"]   # the raw list, on first use


def _rank_by_name(domain, names):
    return [domain.index.get(n, -1) for n in names]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text("abcdé", min_size=1, max_size=3), unique=True, max_size=30),
       st.lists(st.text("abcdéf", min_size=1, max_size=3), max_size=40))
def test_ranks_by_hash_equal_ranks_by_name(public, names):
    domain = PublicDomain(tuple(public), "test")
    got = domain.ranks(item_hashes(names), lambda idx: [names[i] for i in idx.tolist()])
    assert got.dtype == np.int64 and got.tolist() == _rank_by_name(domain, names)


def test_ranks_never_decide_by_hash_alone(monkeypatch):
    """A held item whose hash equals a public item's is outside P; two items of P that share a
    hash are both found (by name)."""
    public = ("dog", "cat", "eel")
    domain = PublicDomain(public, "test")
    names = ["cat", "cow", "eel", "dog"]
    hashes = item_hashes(names)
    hashes[1] = domain.hashes[0]                       # "cow" collides with "dog"
    assert domain.ranks(hashes, lambda idx: [names[i] for i in idx.tolist()]).tolist() == \
        [1, -1, 2, 0]
    clash = PublicDomain(public, "test")
    clash.__dict__["hashes"] = np.array([7, 7, 9], dtype=np.uint64)   # "dog" and "cat" share one
    held = np.array([7, 7, 9, 5], dtype=np.uint64)
    assert clash.ranks(held, lambda idx: [["dog", "cat", "eel", "ant"][i]
                                          for i in idx.tolist()]).tolist() == [0, 1, 2, -1]


def test_wordfreq_languages_are_read_without_importing_it():
    import wordfreq

    from dp_vocab.mechanisms import public_list as public
    assert public._wordfreq_languages() == sorted(wordfreq.available_languages())


def test_cache_entry_is_named_by_the_item_hash_too(tmp_path, monkeypatch):
    """Entries keep the items' hashes: a new hash function must not read an old entry."""
    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path))
    src = tmp_path / "list.txt"
    src.write_text("dog\ncat\n", encoding="utf-8")
    ex = item_extractor(regex_tokenizer())
    before = public._cache_path(str(src), ex, 10)
    monkeypatch.setattr(public, "ITEM_HASH", "another hash")
    assert public._cache_path(str(src), ex, 10) != before


def test_cache_entry_is_named_by_the_extractors_code(tmp_path, monkeypatch):
    """The extractor names the code behind its output (``code_digest``): new text code, a new
    entry; an extractor that cannot name it is not cached."""
    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path))
    src = tmp_path / "list.txt"
    src.write_text("dog\ncat\n", encoding="utf-8")
    ex = item_extractor(regex_tokenizer())
    before = public._cache_path(str(src), ex, 10)
    assert before is not None
    monkeypatch.setattr(ex, "code_digest", lambda: "other text code")
    assert public._cache_path(str(src), ex, 10) not in (None, before)

    class Undigested:
        describe = ex.describe

        def __call__(self, text):
            return ex(text)
    assert public._cache_path(str(src), Undigested(), 10) is None



# ---- the cache under hostile conditions: every case computes the list afresh, never fails,
# never writes outside its own entries

def _cache_case(tmp_path, monkeypatch, lines=("dog", "cat")):
    """(a list file, an extractor, a counting ``raw``, its calls, the list's normalised form)."""
    src = tmp_path / "list.txt"
    src.write_text("".join(f"{w}\n" for w in lines), encoding="utf-8")
    ex = item_extractor(regex_tokenizer())
    calls = []

    def raw():
        calls.append(1)
        return PublicDomain.load(str(src), 100)
    return src, ex, raw, calls, PublicDomain.load(str(src), 100).normalised_by(ex, 100)


def test_cache_without_a_home_is_no_cache(tmp_path, monkeypatch):
    """No HOME and no passwd entry: expanduser("~") stays "~", which must not become a folder
    named "~" in the working directory."""
    from dp_vocab.mechanisms import public_list as public
    for name in ("DP_VOCAB_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(public.os.path, "expanduser", lambda p: p)
    monkeypatch.chdir(tmp_path)
    src, ex, raw, calls, fresh = _cache_case(tmp_path, monkeypatch)
    assert public._cache_path(str(src), ex, 100) is None
    for _ in range(2):
        assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh
    assert len(calls) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["list.txt"]


def test_cache_on_a_read_only_home_reads_and_never_fails(tmp_path, monkeypatch):
    """A read-only file system (EROFS on every create, as root sees it too): an entry already
    there is read; a missing one is computed each time, without an error."""
    import errno

    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache"))
    src, ex, raw, calls, fresh = _cache_case(tmp_path, monkeypatch)
    PublicDomain.normalised_from(str(src), ex, 100, raw)            # the entry, written
    real_open, real_mkdir = public.os.open, public.os.mkdir

    def read_only_open(path, flags, *args):
        if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args)

    def read_only_mkdir(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(public.os, "open", read_only_open)
    monkeypatch.setattr(os, "mkdir", read_only_mkdir)
    assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh and len(calls) == 1
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "elsewhere"))   # nothing there
    for _ in range(2):
        assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh
    assert len(calls) == 3 and not (tmp_path / "elsewhere").exists()
    monkeypatch.setattr(public.os, "open", real_open)
    monkeypatch.setattr(os, "mkdir", real_mkdir)
    if os.geteuid() != 0:   # a real read-only folder (root writes through permissions)
        folder = tmp_path / "ro"
        folder.mkdir(mode=0o555)
        monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(folder / "cache"))
        assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh


def test_cache_with_concurrent_writers_is_always_whole(tmp_path, monkeypatch):
    """Threads of one process (one pid) and the reads between them: every read is no entry
    yet or the exact list, never a mix; no temporary file is left."""
    import threading

    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache"))
    words = [f"word{i}" for i in range(20_000)]   # large enough for writes to overlap
    src, ex, raw, calls, fresh = _cache_case(tmp_path, monkeypatch, words)
    path = public._cache_path(str(src), ex, 100)
    domain = PublicDomain.load(str(src), 100_000).normalised_by(ex, 100_000)
    bad, stop = [], threading.Event()

    def write():
        for _ in range(15):
            public._write_cache(path, domain)

    def read():
        seen_whole = False
        while not stop.is_set():
            got = public._read_cache(path)
            if got is None:
                if seen_whole:
                    bad.append("an entry read whole became unreadable")
            elif got[0] != domain.items or not (got[2] == domain.hashes).all():
                bad.append("a wrong entry")
            else:
                seen_whole = True
    readers = [threading.Thread(target=read) for _ in range(2)]
    writers = [threading.Thread(target=write) for _ in range(6)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert bad == []
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert public._read_cache(path)[0] == domain.items


def test_cache_never_follows_a_planted_link(tmp_path, monkeypatch):
    """A symlink at the entry's name, at the temporary name the old code used
    (".NAME.PID.tmp"), a FIFO at the entry's name, a linked cache folder: the targets are
    never read or written, the run neither fails nor hangs."""
    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache"))
    src, ex, raw, calls, fresh = _cache_case(tmp_path, monkeypatch)
    path = public._cache_path(str(src), ex, 100)
    path.parent.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    path.symlink_to(victim)
    path.with_name(f".{path.name}.{os.getpid()}.tmp").symlink_to(victim)
    # and at the name this process's next write will use
    from itertools import count
    from threading import get_ident
    n = next(public._WRITES)
    monkeypatch.setattr(public, "_WRITES", count(n + 1))
    path.with_name(f".{path.name}.{os.getpid()}.{get_ident()}.{n + 1}.tmp").symlink_to(victim)
    assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh and len(calls) == 1
    assert victim.read_bytes() == b"precious\n"     # the write was skipped, nothing followed
    assert path.is_symlink()
    assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh and len(calls) == 2
    assert victim.read_bytes() == b"precious\n"     # the next name: written, link replaced
    assert not path.is_symlink() and public._read_cache(path)[0] == fresh.items
    # a valid entry behind a link is not read either
    path.rename(tmp_path / "moved.bin")
    path.symlink_to(tmp_path / "moved.bin")
    assert public._read_cache(path) is None
    path.unlink()
    os.mkfifo(path)
    assert public._read_cache(path) is None      # opened non-blocking, not a regular file
    assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh and len(calls) == 3
    assert path.is_file()
    # the folder itself a link: no cache there at all
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache2"))
    (tmp_path / "cache2").mkdir()
    (tmp_path / "cache2" / "public").symlink_to(elsewhere)
    for _ in range(2):
        assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh
    assert len(calls) == 5 and list(elsewhere.iterdir()) == []


def test_cache_entry_tampered_consistently_is_still_checked(tmp_path, monkeypatch):
    """An entry rewritten with matching digests but duplicate or empty items (which
    PublicDomain never holds) is recomputed."""
    import hashlib

    from dp_vocab.mechanisms import public_list as public
    monkeypatch.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path / "cache"))
    src, ex, raw, calls, fresh = _cache_case(tmp_path, monkeypatch)
    path = public._cache_path(str(src), ex, 100)
    PublicDomain.normalised_from(str(src), ex, 100, raw)
    for items in (["dog", "dog"], ["dog", ""]):
        hashes = item_hashes(items).tobytes()
        body = "\n".join(items).encode()
        path.write_bytes(b"%s 2 %s %s\n" % (public._CACHE_FORMAT,
                                             hashlib.sha256(body).hexdigest().encode(),
                                             hashlib.sha256(hashes).hexdigest().encode())
                         + hashes + body)
        n = len(calls)
        assert PublicDomain.normalised_from(str(src), ex, 100, raw) == fresh
        assert len(calls) == n + 1

# ---- the cap on items outside P (public.md §10) --------------------------------------------------

outside_rows = st.lists(st.lists(st.tuples(st.integers(0, 11), st.integers(1, 4)), max_size=10),
                        min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(rows=outside_rows, listed=st.lists(st.booleans(), min_size=12, max_size=12),
       cap=st.integers(1, 4), seeds=st.lists(st.integers(0, 2**64 - 1), min_size=6, max_size=6))
def test_outside_cap_keeps_listed_items_and_the_most_frequent_others(rows, listed, cap, seeds):
    """Each row keeps all its listed items and min(n, cap) of its n others, the most frequent
    (a dropped one is never more frequent than a kept one), in input order; and a row's result
    does not depend on the other rows."""
    from dp_vocab.bounding import _kernels as bk
    rows = [sorted(dict(r).items()) for r in rows]   # distinct items, ascending
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    items = np.array([i for r in rows for i, _ in r], dtype=np.int32)
    counts = np.array([c for r in rows for _, c in r], dtype=np.int32)
    seeds_ = np.array(seeds[:len(rows)], dtype=np.uint64)
    hashes = item_hashes([f"i{k}" for k in range(12)])
    outside = ~np.array(listed)
    tie = np.zeros(1, dtype=np.int64)
    ptr, kept, kc = bk.cap_outside(indptr, items, counts, seeds_, hashes, tie,
                                   outside.view(np.uint8), cap)
    for r, row in enumerate(rows):
        got = list(zip(kept[ptr[r]:ptr[r + 1]].tolist(), kc[ptr[r]:ptr[r + 1]].tolist()))
        assert got == [x for x in row if x in got]               # input order, own counts
        assert [x for x in row if listed[x[0]]] == [x for x in got if listed[x[0]]]
        others = [x for x in row if not listed[x[0]]]
        kept_others = [x for x in got if not listed[x[0]]]
        assert len(kept_others) == min(len(others), cap)
        dropped = [x for x in others if x not in kept_others]
        assert all(d[1] <= k[1] for d in dropped for k in kept_others)
        one = bk.cap_outside(indptr[r:r + 2] - indptr[r], items[indptr[r]:indptr[r + 1]],
                             counts[indptr[r]:indptr[r + 1]], seeds_[r:r + 1], hashes, tie,
                             outside.view(np.uint8), cap)
        assert one[1].tolist() == kept[ptr[r]:ptr[r + 1]].tolist()
    # the threaded build (used from 2M pairs) gives the same arrays as the serial one
    threaded = bk._CAP_OUTSIDE[True](indptr, items, counts, seeds_, hashes, tie,
                                     outside.view(np.uint8), cap)
    assert all(np.array_equal(a, b) for a, b in zip(threaded, (ptr, kept, kc)))


def test_outside_cap_refuses_a_cap_below_one():
    from dp_vocab.bounding import _kernels as bk
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="max_outside"):
        bk.cap_outside(np.array([0, 1]), np.zeros(1, np.int32), np.ones(1, np.int32),
                       np.zeros(1, np.uint64), np.zeros(1, np.uint64), one,
                       np.ones(1, np.uint8), 0)


def test_outside_cap_sets_the_threshold_and_is_recorded():
    """ρ maximises over t ≤ min(max_outside_items, Δ0): the golden values of policy_gaussian at
    Δ0 = 10 (and at Δ0 without the cap); the record states the cap."""
    from dp_vocab.privacy import calibrate
    kw = dict(epsilon=3.0, delta=1e-5, max_items_per_user=1000, public_items=["a", "b"])
    m = make_mechanism("policy_gaussian_public", **kw)
    assert m.max_lone_items == 10 and m.threshold == calibrate.policy_gaussian(3.0, 1e-5, 10)[1]
    assert m.threshold == pytest.approx(7.352201445364618, rel=1e-12)
    # defaults (public.md §10): cutoff ρ + 2σ outside P, (6 + 2)σ on P, λ = 0.95
    assert m.cutoff == pytest.approx(m.threshold + 2 * m.noise_scale, rel=1e-15)
    assert m.public_gamma == pytest.approx(8 * m.noise_scale, rel=1e-15)
    assert m.public_lambda == 0.95
    uncapped = make_mechanism("policy_gaussian_public", **kw, max_outside_items=None)
    assert uncapped.max_lone_items == 1000
    assert uncapped.threshold == pytest.approx(8.273, abs=5e-4)
    assert uncapped.noise_scale == m.noise_scale
    assert make_mechanism("policy_gaussian_public", **kw, max_outside_items=5000).max_lone_items \
        == 1000
    assert m.params()["max_outside_items"] == 10
    assert "at most 10" in m.privacy()["items_outside_public_list"]
    for bad in (0, -1, 2.5, "10"):
        with pytest.raises(ParameterError, match="max_outside_items"):
            make_mechanism("policy_gaussian_public", **kw, max_outside_items=bad)


def test_outside_cap_bounds_the_release_of_a_users_many_unlisted_items():
    """A user with 30 items outside P and 5 in it keeps the 5 and its 3 most frequent others
    (the 27 rarer ones never become candidates), whatever the key."""
    items = [f"x{i}" for i in range(30)] + [f"p{i}" for i in range(5)]
    counts = {f"x{i}": 1 + (i >= 27) for i in range(30)} | {f"p{i}": 1 for i in range(5)}
    its = ItemSets.from_user_items([("u", [w for w in items for _ in range(counts[w])])])
    m = make_mechanism("policy_gaussian_public", epsilon=3.0, delta=1e-5, max_items_per_user=100,
                       public_items=[f"p{i}" for i in range(5)], max_outside_items=3)
    for key in (b"a" * 32, b"b" * 32):
        assert set(m.histogram(its, key)) == {"x27", "x28", "x29"} | {f"p{i}" for i in range(5)}


def test_dpne_public_drops_list_items_holding_the_joiner_from_python_too():
    """dpne_public from Python, without ``for_extractor``: a list item holding the joiner
    ('new york') is not in level 1's domain, so the string is never released at two levels.
    Here every item of P is released whatever its weight (plain BH at q = 0.5, two items,
    eight releases outside P), and 'new york' is a bigram every user holds."""
    from dp_vocab.ingest.extract import extract_sequences
    docs = [(u, "new york a b c d e f") for u in range(200)]
    for joiner, listed in ((" ", "new york"), ("_", "new_york")):
        ex = item_extractor(regex_tokenizer(), joiner=joiner)
        c = extract_sequences(docs, ex)
        m = make_mechanism("dpne_public", epsilon=8.0, delta=1e-5, max_n=2,
                           public_items=[listed, "zzz"], public_fdr=0.5,
                           public_adaptive=False)
        release = m.release(c, random=RandomSource(seed=7))
        assert release.items.count(joiner.join(["new", "york"])) == 1
        assert "zzz" in release.items            # the rest of P is released as designed
        assert release.privacy["public_domain"]["items"] == 1
        assert listed not in m.for_extractor(ex).domain.items


def test_public_lists_given_as_files_or_lists_are_read_entry_by_entry(tmp_path):
    """A file's entries end at every line break str.splitlines() knows (no entry holds one),
    its BOM and blank entries are dropped, duplicates keep their first rank; a list from Python
    holding a line break is refused, described by its kind, never printed."""
    src = tmp_path / "list.txt"
    src.write_bytes("\ufeffthe\nthe\ncat\rsat\nmat\u2028on\x85x\n \nthe\tcat\n".encode())
    assert PublicDomain.load(str(src), 100).items == ("the", "cat", "sat", "mat", "on", "x")
    assert PublicDomain.load(str(src), 2).items == ("the", "cat")
    with pytest.raises(ParameterError) as e:
        make_mechanism("policy_gaussian_public", epsilon=1.0, delta=1e-5,
                       public_items=["fine", "Alice\u2028Secret"])
    assert "public_items: expected" in str(e.value) and "a list of 2 entries" in str(e.value)
    assert "Alice" not in str(e.value)
