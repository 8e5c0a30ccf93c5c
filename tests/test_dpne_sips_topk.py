"""What is specific to DPNE (ngrams.md), DP-SIPS (sips.md) and one-shot top-k (topk.md)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr, ndtri
from scipy.stats import binomtest, chisquare

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.ingest.extract import extract_sequences
from dp_vocab.mechanisms.claim import Norm
from dp_vocab.privacy import calibrate
from dp_vocab.privacy.noise import RandomSource, gumbel
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import RegexTokenizer
from dpne_levels import level_histogram

EXTRACT = ItemExtractor(RegexTokenizer())


def corpus(docs):
    return extract_sequences(docs, EXTRACT)


# ---- DPNE ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("split", ["uniform", 10.0, 0.5, [1, 2, 2, 1.5]])
def test_dpne_level_budget_composes_to_one_gaussian(split):
    m = make_mechanism("dpne", epsilon=3, delta=1e-5, max_n=4, budget_split=split)
    assert sum(1 / s ** 2 for s in m.level_sigmas) == pytest.approx(1 / m.sigma_star ** 2, rel=1e-12)
    assert m.sigma_star == pytest.approx(calibrate.agm_sigma(3, 5e-6), rel=1e-12)
    assert m.threshold == pytest.approx(
        calibrate.gaussian_threshold(m.level_sigmas[0], 5e-6, m.max_items_per_user))


def test_dpne_released_ngrams_have_released_prefix_and_suffix():
    docs = [(f"u{i}", "the cat sat on the mat . the dog sat on the log .") for i in range(300)]
    docs += [(f"v{i}", f"a rare phrase number {i} here") for i in range(50)]
    m = make_mechanism("dpne", epsilon=4, delta=1e-5, max_n=5, max_items_per_user=20, eta=0.5)
    rel = m.release(corpus(docs), random=RandomSource(3))
    released = set(rel.items)
    by_len = {}
    for g in released:
        by_len.setdefault(len(g.split(" ")), set()).add(g)
    assert set(by_len) == {1, 2, 3, 4, 5}  # every length up to 5 on this corpus
    for g in released:
        parts = g.split(" ")
        if len(parts) > 1:
            assert " ".join(parts[:-1]) in released and " ".join(parts[1:]) in released
    assert [lv["n"] for lv in rel.details["levels"]] == [1, 2, 3, 4, 5]


words = st.sampled_from(["a", "b", "c", "d", "e"])
db = st.dictionaries(st.integers(0, 15), st.lists(st.lists(words, min_size=1, max_size=6)
                                                  .map(" ".join), min_size=1, max_size=3),
                     min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(data=db, key=st.binary(min_size=32, max_size=32), pick=st.data())
def test_dpne_per_level_sensitivity(data, key, pick):
    docs = [(u, t) for u, texts in data.items() for t in texts]
    c = corpus(docs)
    x = pick.draw(st.sampled_from(sorted(data)))
    cp = c.without_users([x])
    m = make_mechanism("dpne", epsilon=1, delta=1e-5, max_n=3, max_items_per_user=3)
    previous = ["a", "b", "c", "d"]  # a fixed, public S_1
    for n, prev in ((1, []), (2, previous)):
        h, hp = level_histogram(m, c, n, prev, key), level_histogram(m, cp, n, prev, key)
        keys = set(h) | set(hp)
        claim = m.claim.sensitivity   # per level, as for every mechanism: its own claim
        assert claim.norm is Norm.L2 and claim.monotone
        l2 = math.sqrt(sum((h.get(k, 0) - hp.get(k, 0)) ** 2 for k in keys))
        assert l2 <= claim.bound + 1e-9
        assert all(h.get(k, 0) >= hp.get(k, 0) - 1e-12 for k in keys)
        if n == 2:  # candidates only: prefix and suffix in S_1
            assert all(g.split(" ")[0] in previous and g.split(" ")[1] in previous for g in h)


@pytest.mark.slow
def test_dpne_spurious_count_is_binomial_over_exact_candidates():
    # level 1 certainly releases a, b, c (weights far above threshold): C_2 = 3² = 9 bigrams,
    # of which users hold "a b" and "b c" (supp W_2 = 2): spurious K ~ Bin(7, Φ(−ρ_2/σ_2))
    docs = [(i, "a b c") for i in range(3000)]
    m = make_mechanism("dpne", epsilon=8, delta=1e-5, max_n=2, max_items_per_user=5, eta=0.3)
    c = corpus(docs)
    sigma2 = m.level_sigmas[1]
    rho2 = sigma2 * float(ndtri(1 - 0.3 * 3 / 9))
    p0 = float(ndtr(-rho2 / sigma2))
    runs, total = 400, 0
    rng = RandomSource()
    for _ in range(runs):
        rel = m.release(c, random=rng)
        assert {"a", "b", "c"} <= set(rel.items)
        # the oracle knows the truth: released bigrams nobody holds are the spurious ones
        total += len({g for g in rel.items if " " in g} - {"a b", "b c"})
        assert "spurious" not in str(rel.details)  # a count of them would not be private
    assert binomtest(total, runs * 7, p0).pvalue > 1e-6


# ---- DP-SIPS ------------------------------------------------------------------------------------

def test_sips_calibration():
    m = make_mechanism("dp_sips", epsilon=3, delta=1e-5, rounds=3, allocation=0.3,
                       max_items_per_user=5)
    f = m.fractions
    assert sum(f) == pytest.approx(1) and f[0] < f[1] < f[2]
    assert sum(1 / s ** 2 for s in m.round_sigmas) == pytest.approx(1 / m.sigma ** 2, rel=1e-12)
    assert sum(m.round_deltas) == pytest.approx(5e-6)
    for s, d, t in zip(m.round_sigmas, m.round_deltas, m.round_thresholds):
        assert t == pytest.approx(calibrate.gaussian_threshold(s, d, 5))


@pytest.mark.parametrize("rounds,allocation", [(64, 1e-6), (10, 1e-40)])
def test_sips_allocation_whose_first_round_underflows_is_refused(rounds, allocation):
    """a^(R−1) = 0 in floating point would give round 1 no budget (and divide by zero)."""
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="allocation"):
        make_mechanism("dp_sips", epsilon=3, delta=1e-5, rounds=rounds, allocation=allocation)


sips_db = st.dictionaries(st.integers(0, 20), st.lists(st.sampled_from("abcdefgh"), max_size=8),
                          min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(data=sips_db, key=st.binary(min_size=32, max_size=32), pick=st.data(),
       before=st.lists(st.sampled_from("abcdefgh"), max_size=4))
def test_sips_round_sensitivity_given_earlier_outputs(data, key, pick, before):
    d = ItemSets.from_user_items(data.items())
    x = pick.draw(st.sampled_from(sorted(data)))
    m = make_mechanism("dp_sips", epsilon=1, delta=1e-5, max_items_per_user=2)
    for r in (1, 2, 3):
        h = m.round_histogram(d, key, r, before)
        hp = m.round_histogram(d.without_users([x]), key, r, before)
        assert not set(h) & set(before)  # released items never come back
        keys = set(h) | set(hp)
        assert math.sqrt(sum((h.get(k, 0) - hp.get(k, 0)) ** 2 for k in keys)) <= 1 + 1e-9


def test_sips_rounds_partition_the_release():
    d = ItemSets.from_user_items([(i, ["a", "b", "c", f"z{i % 40}"]) for i in range(2000)])
    rel = make_mechanism("dp_sips", epsilon=2, delta=1e-5).release(d, random=RandomSource(5))
    assert sum(r["released"] for r in rel.details["rounds"]) == len(rel.items)


# ---- top-k --------------------------------------------------------------------------------------

def test_top_k_returns_exactly_k_or_all_candidates():
    d = ItemSets.from_user_items([(i, [f"w{j}" for j in range(30) if i % (j + 1) == 0])
                                  for i in range(3000)])
    few = make_mechanism("top_k", epsilon=4, delta=1e-5, k=1000).release(d, random=RandomSource(1))
    assert few.details["candidates"] == len(few.items) < 1000
    rel = make_mechanism("top_k", epsilon=4, delta=1e-5, k=5).release(d, random=RandomSource(1))
    assert len(rel.items) == 5 and rel.details["candidates"] > 5
    assert set(rel.items) <= {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}  # the frequent ones


@pytest.mark.slow
def test_one_shot_gumbel_top1_is_the_exponential_mechanism():
    h = np.array([3.0, 2.0, 2.0, 0.0])
    eps, n = 0.7, 200_000
    winners = np.empty(n, dtype=np.int64)
    rng = RandomSource()
    for start in range(0, n, 20_000):
        g = gumbel(1 / eps, 4 * 20_000, rng).reshape(20_000, 4)
        winners[start:start + 20_000] = np.argmax(h + g, axis=1)
    p = np.exp(eps * h) / np.exp(eps * h).sum()
    assert chisquare(np.bincount(winners, minlength=4), p * n).pvalue > 1e-6


def test_dpne_joiner_inside_tokens_is_unambiguous():
    """With joiner "_" the default regex keeps "_" inside words ("secret_b"). n-grams are token
    tuples and tokens holding the joiner are dropped where tokens are joined, so a lone user's
    data can neither crash the run nor make two n-grams share a name."""
    ex = ItemExtractor(RegexTokenizer(), joiner="_")
    assert ex.runs("a secret_b b a") == [["a"], ["b", "a"]]
    assert ex("x_y z") == ["x_y", "z"]                 # unigrams only: nothing is joined
    docs = [(f"u{i}", "a b a a . secret_b b") for i in range(300)]
    docs.append(("x", "secret_b secret_b a_b b_a"))
    m = make_mechanism("dpne", epsilon=4, delta=1e-5, max_n=3, max_items_per_user=10, eta=0.5)
    c = extract_sequences(docs, ex)
    for seed in range(30):
        rel = m.release(c, random=RandomSource(seed))
        assert not any("secret" in g for g in rel.items)
        for g in rel.items:   # every released name reads back as tokens of the corpus
            assert set(g.split("_")) <= {"a", "b", "."}
        assert [lv["released"] for lv in rel.details["levels"]] == [
            sum(1 for g in rel.items if g.count("_") == n - 1) for n in (1, 2, 3)]


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_level_kernels_equal_their_array_definitions(data):
    """The compiled passes behind DPNE's levels against the numpy expressions they replace."""
    from dp_vocab.bounding._ngram_kernels import bitmap_index, mark_present, mark_released
    m = data.draw(st.integers(1, 40))
    n_pos = data.draw(st.integers(0, 120))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    s = rng.integers(-1, m, n_pos).astype(np.int32)
    tokens = np.zeros(n_pos, dtype=np.int32)
    cuts = np.unique(rng.integers(0, n_pos + 1, data.draw(st.integers(0, 6))))
    seq_ptr = np.unique(np.concatenate([[0, n_pos], cuts])).astype(np.int64)
    n = data.draw(st.integers(2, 6))
    # candidates: both (n-1)-grams released and the n-gram inside its sequence
    end = np.repeat(seq_ptr[1:], np.diff(seq_ptr))
    pos = np.array([i for i in range(n_pos - 1)
                    if s[i] >= 0 and s[i + 1] >= 0 and i + n <= end[i]], dtype=np.int64)
    keys_at = s[pos].astype(np.int64) * m + s[pos + 1] if pos.size else np.zeros(0, np.int64)
    words = np.zeros((m * m + 63) // 64, dtype=np.uint64)
    mark_present(s, tokens, seq_ptr, n, m, words)
    below, present = bitmap_index(words)
    assert present.tolist() == np.unique(keys_at).tolist()
    assert below[-1] == present.size
    # released keys: positions whose key is released get its rank, all others -1
    released = np.unique(rng.integers(0, m * m, data.draw(st.integers(1, 30))))
    keys = released[rng.permutation(released.size)]   # S_n in some order: rank i holds keys[i]
    by_key = np.argsort(keys)
    starts = np.searchsorted(keys[by_key], np.arange(m + 1, dtype=np.int64) * m)
    expected = np.full(n_pos, -1, dtype=np.int32)
    for p, k in zip(pos.tolist(), keys_at.tolist()):
        hit = np.flatnonzero(keys == k)
        if hit.size:
            expected[p] = hit[0]
    mark_released(s, tokens, seq_ptr, n, m, starts, keys[by_key], by_key.astype(np.int32))
    assert s.tolist() == expected.tolist()
