"""What is specific to the sequential policies (policy.md) and GW (greedy.md), plus the greedy-by-gap negative control (policy.md §5)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.mechanisms import _kernels

from reference_impl import (greedy_by_gap_user, greedy_fixed_order_user, l1_descent_user,
                            l2_descent_user, run_policy)

WORDS = [f"w{i}" for i in range(8)]
db_strategy = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6, unique=True),
                       min_size=1, max_size=10)


def _csr(users):
    ids = {w: i for i, w in enumerate(WORDS)}
    indptr = np.zeros(len(users) + 1, dtype=np.int64)
    np.cumsum([len(u) for u in users], out=indptr[1:])
    items = np.array([ids[w] for u in users for w in u], dtype=np.int32)
    return np.arange(len(users), dtype=np.int64), indptr, items


@settings(max_examples=200, deadline=None)
@given(users=db_strategy, gamma=st.sampled_from([0.3, 1.0, 1.7, 5.0]))
def test_compiled_kernels_match_reference(users, gamma):
    order, indptr, items = _csr(users)
    for kernel, ref in ((_kernels.l1_descent, l1_descent_user),
                        (_kernels.l2_descent, l2_descent_user),
                        (_kernels.greedy_fill, greedy_fixed_order_user)):
        got = kernel(order, indptr, items, len(WORDS), gamma)
        want = run_policy(ref, users, gamma)
        np.testing.assert_allclose(got, [want.get(w, 0.0) for w in WORDS], rtol=0, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(users=db_strategy, data=st.data())
def test_l1_descent_is_permutation_invariant_within_a_user(users, data):
    shuffled = [data.draw(st.permutations(u)) for u in users]
    a = _kernels.l1_descent(*_csr(users), len(WORDS), 1.3)
    b = _kernels.l1_descent(*_csr(shuffled), len(WORDS), 1.3)
    np.testing.assert_allclose(a, b, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(users=db_strategy, gamma=st.sampled_from([0.4, 1.0, 2.5]))
def test_single_user_update_moves_mass_at_most_one_and_fills_exactly(users, gamma):
    order, indptr, items = _csr(users)
    prev = np.zeros(len(WORDS))
    for k in range(1, len(users) + 1):
        cur = _kernels.l1_descent(order[:k], indptr, items, len(WORDS), gamma)
        assert 0 <= (cur - prev).sum() <= 1 + 1e-12 and np.all(cur >= prev)
        assert np.all(cur <= gamma)
        prev = cur


def test_filled_items_sit_at_gamma_exactly():
    # policy.md §5: items whose gap the loop pays in full are assigned Γ, not
    # accumulated to Γ − ulp. (Earlier partial increments can still drift by an ulp.)
    got = _kernels.l1_descent(*_csr([["w0", "w1", "w2"]] * 2), len(WORDS), 0.1 + 0.2)
    assert np.all(got[:3] == 0.1 + 0.2)


def test_lone_user_weights_are_one_over_t():
    d = ItemSets.from_user_items([("x", ["a", "b", "c", "d"])])
    key = b"k" * 32
    h = make_mechanism("policy_laplace", epsilon=1, delta=1e-5, max_items_per_user=4).histogram(d, key)
    assert h == pytest.approx({k: 0.25 for k in "abcd"})
    h = make_mechanism("policy_gaussian", epsilon=1, delta=1e-5, max_items_per_user=4).histogram(d, key)
    assert h == pytest.approx({k: 0.5 for k in "abcd"})
    h = make_mechanism("gw", epsilon=1, delta=1e-5, max_items_per_user=4).histogram(d, key)
    assert sorted(h.values()) == [0.0, 0.0, 0.0, 1.0]  # one item takes the whole budget


def _l1_gap(update, users, xi, gamma):
    h = run_policy(update, users, gamma)
    hp = run_policy(update, users[:xi] + users[xi + 1:], gamma)
    return sum(abs(h.get(k, 0.0) - hp.get(k, 0.0)) for k in set(h) | set(hp))


def test_negative_control_greedy_by_gap_is_not_contractive():
    """A test of the test (policy.md §5): the same neighbour search that bounds the shipped policies
    must find L1 > 1 for greedy-by-gap. If this stops failing the policy, the search is broken."""
    rng = random.Random(0)
    worst_gap = worst_l1 = 0.0
    for _ in range(3000):
        users = [rng.sample(WORDS[:6], rng.randint(1, 4)) for _ in range(rng.randint(2, 8))]
        xi, gamma = rng.randrange(len(users)), rng.choice([1.5, 2.0, 3.0])
        worst_gap = max(worst_gap, _l1_gap(greedy_by_gap_user, users, xi, gamma))
        worst_l1 = max(worst_l1, _l1_gap(l1_descent_user, users, xi, gamma))
    assert worst_gap > 1.5
    assert worst_l1 <= 1 + 1e-9


def test_greedy_by_gap_and_maxsum_are_not_offered():
    from dp_vocab.registry import mechanism_names
    names = mechanism_names()
    assert not any("gap" in n or "maxsum" in n or "greedy" in n for n in names)


def test_gw_refuses_the_published_uncapped_configuration():
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="max_items_per_user"):
        make_mechanism("gw", epsilon=1, delta=1e-5, max_items_per_user=None)


def test_gw_priority_is_own_frequency():
    d = ItemSets.from_user_items([("x", ["rare"] + ["often"] * 5 + ["mid"] * 2)])
    gw = make_mechanism("gw", epsilon=1, delta=1e-5, max_items_per_user=2)
    b = gw.bounded_sets(d, b"k" * 32)
    assert [d.vocab[int(i)] for i in b.items] == ["often", "mid"]
    assert gw.histogram(d, b"k" * 32) == {"often": 1.0, "mid": 0.0}


def test_gw_kt_priority_is_public_rank_then_own_frequency():
    public = {"the": 100.0, "cat": 5.0}
    d = ItemSets.from_user_items([("x", ["zzz"] * 9 + ["cat", "the", "qqq", "qqq"])])
    kt = make_mechanism("gw_kt", epsilon=1, delta=1e-5, max_items_per_user=4,
                        public_frequencies=public)
    b = kt.bounded_sets(d, b"k" * 32)
    assert [d.vocab[int(i)] for i in b.items] == ["the", "cat", "zzz", "qqq"]


def test_gw_kt_reads_a_public_frequency_file(tmp_path):
    import gzip
    p = tmp_path / "freq.tsv.gz"
    with gzip.open(p, "wt", encoding="utf-8") as f:
        f.write("the\t0.05\ncat\t0.001\n")
    kt = make_mechanism("gw_kt", epsilon=1, delta=1e-5, public_frequencies=str(p))
    assert kt.params()["public_frequencies"] == str(p)
    bad = tmp_path / "bad.tsv"
    bad.write_text("the\t0.05\ncat\tlots\n", encoding="utf-8")
    from dp_vocab.errors import CorpusError
    with pytest.raises(CorpusError, match=r"bad.tsv:2: field 'frequency'"):
        make_mechanism("gw_kt", epsilon=1, delta=1e-5, public_frequencies=str(bad))
