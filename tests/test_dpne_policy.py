"""DPNE with Policy Gaussian levels (ngrams.md §2): per-level sensitivity over the level's public
candidates for the same key, cutoffs, and what the policy changes in the output."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab import make_mechanism
from dp_vocab.ingest.extract import extract_sequences
from dp_vocab.mechanisms.claim import Norm
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import RegexTokenizer
from dpne_levels import level_histogram

EXTRACT = ItemExtractor(RegexTokenizer())
words = st.sampled_from(["a", "b", "c", "d", "e"])
db = st.dictionaries(st.integers(0, 15), st.lists(st.lists(words, min_size=1, max_size=7)
                                                  .map(" ".join), min_size=1, max_size=3),
                     min_size=1, max_size=10)


def corpus(docs):
    return extract_sequences(docs, EXTRACT)


# tight: ε = 8, δ = 0.4 and α = 0.1 make the cutoff small, so users fill n-grams to Γ and
# later users skip them (the contraction, not only the first step, is exercised)
PARAMS = {"tight": dict(epsilon=8.0, delta=0.4, alpha=0.1, eta=0.5),
          "default": dict(epsilon=1.0, delta=1e-5)}


@settings(max_examples=40, deadline=None)
@given(data=db, key=st.binary(min_size=32, max_size=32), pick=st.data(),
       case=st.sampled_from(sorted(PARAMS)))
def test_policy_levels_have_l2_sensitivity_one_for_the_same_key(data, key, pick, case):
    docs = [(u, t) for u, texts in data.items() for t in texts]
    c = corpus(docs)
    x = pick.draw(st.sampled_from(sorted(data)))
    cp = c.without_users([x])
    m = make_mechanism("dpne", max_n=3, max_items_per_user=3, policy="l2_descent",
                       **PARAMS[case])
    claim = m.claim.sensitivity
    assert claim.norm is Norm.L2 and claim.bound == 1.0 and not claim.monotone
    s1 = ["a", "b", "c", "d"]                          # a fixed, public S_1
    s2 = ["a b", "b a", "b c", "c d", "d a", "a a"]    # a fixed, public S_2
    for n, prev in ((1, []), (2, s1), (3, s2)):
        h, hp = level_histogram(m, c, n, prev, key), level_histogram(m, cp, n, prev, key)
        keys = set(h) | set(hp)
        l2 = math.sqrt(sum((h.get(k, 0) - hp.get(k, 0)) ** 2 for k in keys))
        assert l2 <= claim.bound + 1e-9
        assert set(hp) <= set(h)
        if n == 1:  # lone unigrams of X: ≤ 1/√t each, and no weight above the cutoff Γ_1
            assert all(0 < w <= claim.cap + 1e-12 for w in h.values())
            newly = set(h) - set(hp)   # X's capped unigrams no other capped set holds
            assert newly <= {t for d in data[x] for t in d.split()}
            assert all(h[k] <= len(newly) ** -0.5 + 1e-12 for k in newly)
        else:       # candidates only: prefix and suffix in S_{n-1}
            pre = set(prev)
            assert all(" ".join(g.split()[:-1]) in pre and " ".join(g.split()[1:]) in pre
                       for g in h)


def test_policy_changes_only_the_weights_not_the_record_shape():
    docs = [(f"u{i}", "the cat sat on the mat . the dog sat on the log .") for i in range(300)]
    m = make_mechanism("dpne", epsilon=4, delta=1e-5, max_n=4, max_items_per_user=50,
                       policy="l2_descent")
    rel = m.release(corpus(docs), random=RandomSource(3))
    assert rel.params["policy"] == "l2_descent" and rel.params["alpha"] == 5.0
    assert rel.privacy["cutoff"] == m.threshold + 5.0 * m.level_sigmas[0]
    assert [lv["n"] for lv in rel.details["levels"]] == [1, 2, 3, 4]
    released = set(rel.items)
    assert {"the", "cat", "the cat", "sat on the"} <= released  # 300 users: far above Γ
    for g in released:
        parts = g.split(" ")
        if len(parts) > 1:
            assert " ".join(parts[:-1]) in released and " ".join(parts[1:]) in released


PUBLIC_WORDS = ["a", "b", "x"]   # "x": public, held by nobody


@settings(max_examples=40, deadline=None)
@given(data=db, key=st.binary(min_size=32, max_size=32), pick=st.data(),
       case=st.sampled_from(sorted(PARAMS)), cap=st.sampled_from([None, 1, 2]))
def test_public_level_one_has_l2_sensitivity_one_and_bounded_lone_unigrams(data, key, pick,
                                                                            case, cap):
    """dpne_public's level 1 (public.md §2, §10; ngrams.md §1b): L2 ≤ 1 for the same key;
    new candidates are X's unigrams; those outside the public list are at most
    max_lone_items and weigh ≤ 1/√t each; per-item cutoffs: (public_cutoff + α)σ_1 on the
    list, ρ_1 + ασ_1 elsewhere."""
    docs = [(u, t) for u, texts in data.items() for t in texts]
    c = corpus(docs)
    x = pick.draw(st.sampled_from(sorted(data)))
    cp = c.without_users([x])
    m = make_mechanism("dpne_public", max_n=2, max_items_per_user=3, policy="l2_descent",
                       public_items=PUBLIC_WORDS, max_outside_items=cap, **PARAMS[case])
    assert m.max_lone_items == (3 if cap is None else min(cap, 3))
    h, hp = level_histogram(m, c, 1, [], key), level_histogram(m, cp, 1, [], key)
    keys = set(h) | set(hp)
    assert math.sqrt(sum((h.get(k, 0) - hp.get(k, 0)) ** 2 for k in keys)) <= 1 + 1e-9
    assert set(hp) <= set(h)
    newly = set(h) - set(hp)
    assert newly <= {t for d in data[x] for t in d.split()}
    lone = newly - set(PUBLIC_WORDS)
    assert len(lone) <= m.max_lone_items
    assert all(h[k] <= len(lone) ** -0.5 + 1e-12 for k in lone)
    public_gamma = (m.public_cutoff + m.alpha) * m.level_sigmas[0]
    outside_gamma = m.threshold + m.alpha * m.level_sigmas[0]
    for k, w in h.items():
        assert 0 < w <= (public_gamma if k in PUBLIC_WORDS else outside_gamma) + 1e-12


def test_public_level_one_keeps_a_users_most_frequent_outside_unigrams():
    """At level 1 a user keeps every unigram of the list and its K most frequent others
    (public.md §10), and ρ_1 covers K lone unigrams, not Δ0."""
    from dp_vocab.privacy import calibrate
    text = "a b " + " ".join(f"w{i} " * (i + 1) for i in range(6))   # w5 most frequent
    c = corpus([("lone", text)])
    for key in (b"k" * 32, b"j" * 32):
        m = make_mechanism("dpne_public", epsilon=3.0, delta=1e-5, max_n=2,
                           max_items_per_user=50, policy="l2_descent",
                           public_items=PUBLIC_WORDS, max_outside_items=2)
        assert set(level_histogram(m, c, 1, [], key)) == {"a", "b", "w5", "w4"}
    assert m.threshold == calibrate.gaussian_threshold(m.level_sigmas[0], 1e-5 / 2, 2)
    assert m.threshold < make_mechanism("dpne_public", epsilon=3.0, delta=1e-5, max_n=2,
                                        max_items_per_user=50, public_items=PUBLIC_WORDS,
                                        max_outside_items=None).threshold
    assert m.params()["max_outside_items"] == 2
    assert "at most 2" in m.privacy()["items_outside_public_list"]
    un = make_mechanism("dpne_public", epsilon=3.0, delta=1e-5, max_n=2, max_items_per_user=50,
                        policy="l2_descent", public_items=PUBLIC_WORDS, max_outside_items=None)
    assert len(level_histogram(un, c, 1, [], b"k" * 32)) == 8
