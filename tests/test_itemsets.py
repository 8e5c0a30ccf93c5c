"""ItemSets: construction, CSR invariants, streaming compaction, neighbours."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab import ItemSets
from dp_vocab.errors import CorpusError
from dp_vocab.data.builder import ItemRowsBuilder

pairs = st.lists(st.tuples(st.sampled_from(["a", "b", "c", 1, 2]),
                           st.lists(st.sampled_from(["x", "y", "z", "é", ""]), max_size=6)),
                 max_size=12)


@settings(max_examples=200, deadline=None)
@given(pairs=pairs, compact=st.integers(1, 5))
def test_csr_round_trip_matches_counters(pairs, compact):
    want: dict = {}
    for u, items in pairs:
        want.setdefault(u, Counter()).update(items)
    b = ItemRowsBuilder(compact_every=compact)
    for u, items in pairs:
        b.add(u, items)
    s = ItemSets.from_rows(b.build())
    assert s.to_dict() == {u: dict(c) for u, c in want.items()}
    assert s.indptr[0] == 0 and s.indptr[-1] == s.items.size == s.counts.size
    for i in range(s.n_users):
        row, counts = s.row(i)
        assert np.all(np.diff(row) > 0) and np.all(counts >= 1)


def test_neighbour_keeps_vocabulary_and_rows():
    s = ItemSets.from_user_items([("a", ["x"]), ("b", ["y", "x"]), ("c", ["z"])])
    n = s.without_users(["b"])
    assert n.vocab is s.vocab and n.to_dict() == {"a": {"x": 1}, "c": {"z": 1}}
    assert "x" not in repr(s)  # no private content in reprs


def test_bad_user_ids_are_rejected():
    with pytest.raises(CorpusError, match="user id"):
        ItemSets.from_user_items([(None, ["x"])])
    with pytest.raises(CorpusError, match="user id"):
        ItemSets.from_user_items([(1.5, ["x"])])


def test_arrays_are_read_only():
    s = ItemSets.from_user_items([("a", ["x"])])
    with pytest.raises(ValueError):
        s.items[0] = 3


@pytest.mark.parametrize("items,found", [("the cat", "found a str"), (b"xy", "found a bytes"),
                                         (["x", 1], "found an int"), ([None], "found a NoneType")])
def test_from_user_items_wants_lists_of_strings(items, found):
    """A text in place of its items would be read as characters, and non-string items fail
    later, far from the cause: both are refused where the item sets are built, by type."""
    with pytest.raises(CorpusError, match=f"field 'items': pair 1: expected .*{found}"):
        ItemSets.from_user_items([("u", ["ok"]), ("v", items)])
    assert ItemSets.from_user_items([("u", iter(["a", "b"])), ("v", ("a",)),
                                     ("w", np.array(["a"]))]).to_dict() == \
        {"u": {"a": 1, "b": 1}, "v": {"a": 1}, "w": {"a": 1}}   # str subclasses (np.str_) too


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 2 ** 31 - 1))))
def test_user_starts_is_the_binary_search_per_user(n_users, pairs):
    """The compiled one-pass indptr equals a binary search per user in the sorted keys; a key
    of a user outside 0..n_users−1 is refused (the loop writes by user)."""
    from dp_vocab.data.builder import user_starts
    keys = np.array(sorted({(u << 32) | i for u, i in pairs}), dtype=np.int64)
    if keys.size and keys[-1] >> 32 >= n_users:
        with pytest.raises(ValueError):
            user_starts(keys, n_users)
        return
    want = np.searchsorted(keys, np.arange(n_users + 1, dtype=np.int64) << 32)
    assert np.array_equal(user_starts(keys, n_users), want)
    if keys.size:   # unsorted, a user past the end in the middle: refused, never written
        with pytest.raises(ValueError):
            user_starts(np.r_[keys[:1], np.int64(n_users) << 32, keys[1:]], n_users)
