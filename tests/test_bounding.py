"""Bounding written once (dp_vocab.bounding): what is specific to it beyond the mechanism
contract suite."""

import numpy as np
import pytest

import dp_vocab.data.vocabulary as vocabulary_module
from dp_vocab import ItemSets, make_mechanism
from dp_vocab.bounding import ItemWeights, NamesOf

KEYS = [bytes([k]) * 32 for k in range(40)]


@pytest.fixture
def a_and_b_share_a_hash(monkeypatch):
    """Force a 64-bit collision between the items "a" and "b" (crafting one costs ~2^32)."""
    real = vocabulary_module.item_hashes

    def colliding(strings, encoded=None):
        strings = list(strings)
        h = real(strings, encoded)
        h[[i for i, s in enumerate(strings) if s == "b"]] = real(["a"])[0]
        return h
    monkeypatch.setattr(vocabulary_module, "item_hashes", colliding)


@pytest.mark.parametrize("name", ["count_laplace", "gw", "policy_gaussian"])
def test_items_sharing_a_hash_tie_by_their_strings(a_and_b_share_a_hash, name):
    """Y = {a, b}, X = {b}, Δ0 = 1. With X read first, "b" is interned before "a"; a tie broken
    by interning order would keep b for Y with X and a without (L1 distance 3 > Δ0)."""
    m = make_mechanism(name, epsilon=1.0, delta=1e-5, max_items_per_user=1)
    with_x = ItemSets.from_user_items([("x", ["b"]), ("y", ["a", "b"])])
    without_x = ItemSets.from_user_items([("y", ["a", "b"])])
    assert with_x.vocab.hashes()[0] == with_x.vocab.hashes()[1]   # the collision is real
    for key in KEYS:
        kept = []
        for data in (with_x, without_x):
            b = m.bounded_sets(data, key)
            row = data.user_ids.index("y")
            kept.append([data.vocab[int(i)] for i in b.items[b.indptr[row]:b.indptr[row + 1]]])
        assert kept[0] == kept[1] == ["a"]   # "a" < "b": the strings decide
        h, hp = m.histogram(with_x, key), m.histogram(without_x, key)
        assert sum(abs(h.get(k, 0) - hp.get(k, 0)) for k in set(h) | set(hp)) <= 1 + 1e-9


def test_no_collision_means_no_tie_table():
    its = ItemSets.from_user_items([("u", ["a", "b", "c"])])
    assert its.vocab.ties().size == 1   # the common case costs one uniqueness check
    assert np.unique(its.vocab.hashes()).size == 3


def test_dask_merge_tells_items_apart_by_both_hashes():
    """Rows merged from partitions identify items by two hashes: two items sharing the first
    one stay two items."""
    from dp_vocab.backends.dask import _unique_rows
    rows = np.array([[5, 1], [3, 9], [5, 2], [3, 9], [5, 1]], dtype=np.uint64)
    uniq, ids = _unique_rows(rows)
    assert uniq.tolist() == [[3, 9], [5, 1], [5, 2]] and ids.tolist() == [1, 0, 2, 0, 1]
    uniq, ids = _unique_rows(rows[[0, 1, 3]])   # no shared first hash: the one-sort path
    assert uniq.tolist() == [[3, 9], [5, 1]] and ids.tolist() == [1, 0, 0]


@pytest.mark.parametrize("first", ["a", "b"])
def test_distinct_cap_breaks_hash_ties_by_the_string(a_and_b_share_a_hash, first):
    """A user over max_distinct_per_user keeps its smallest-hash items. "a" and "b" share a hash
    and the cap (1) falls between them: "a" < "b" decides, whichever arrives (or merges) first."""
    from dp_vocab.ingest.extract import extract_itemsets, merge_itemsets
    from dp_vocab.data.builder import ItemRowsBuilder
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    docs = [[first], ["b" if first == "a" else "a"]]
    builder = ItemRowsBuilder(cap=1)
    for doc in docs:
        builder.add("u", doc)
    assert list(ItemSets.from_rows(builder.build()).to_dict()["u"]) == ["a"]
    ex = ItemExtractor(RegexTokenizer(), max_distinct_per_user=1)   # the columnar path
    assert list(extract_itemsets([("u", doc[0]) for doc in docs], ex).to_dict()["u"]) == ["a"]
    from dp_vocab.data.itemsets import item_hashes
    parts = [(["u"], doc, item_hashes(doc), np.array([0, 1]), np.array([0]), np.array([1]))
             for doc in docs]
    assert list(merge_itemsets(parts, 1).to_dict()["u"]) == ["a"]   # Dask merges any order


def test_canonical_order_is_the_stable_sort_of_the_hashes():
    """Distinct hashes take numpy's default sort; any repeated hash, the stable one."""
    from dp_vocab.bounding import canonical_order

    rng = np.random.default_rng(3)
    distinct = rng.permutation(2**40 + np.arange(1000, dtype=np.uint64))
    repeated = rng.integers(0, 20, 1000).astype(np.uint64)
    for hashes in (distinct, repeated):
        assert canonical_order(hashes).tolist() == np.argsort(hashes, kind="stable").tolist()


def test_names_of_reads_like_the_list_it_stands_for():
    strings = [f"w{i}" for i in range(50)]
    asked = []

    def names_of(ids):
        asked.append(len(ids))
        return [strings[i] for i in ids.tolist()]
    ids = np.array([7, 3, 3, 49, 0, 12])
    lazy, plain = NamesOf(names_of, ids), [strings[i] for i in ids]
    assert asked == []   # nothing read until asked
    assert len(lazy) == len(plain) and lazy[0] == plain[0] and lazy[-1] == plain[-1]
    assert lazy[1:4] == plain[1:4] and lazy.take(np.array([5, 1])) == [plain[5], plain[1]]
    order = np.array([5, 4, 3, 2, 1, 0])
    assert list(lazy.reordered(order)) == [plain[i] for i in order]
    assert list(lazy) == plain and "w49" in lazy and lazy.index("w12") == 5
    w = ItemWeights(lazy, np.arange(6, dtype=np.uint64)[::-1].copy(), np.ones(6))
    assert list(w.canonical().names) == plain[::-1]
    assert w.names_at(np.array([2])) == [plain[2]]


class _CountingList(list):
    """A list that counts the items read from it one at a time."""

    reads = 0

    def __getitem__(self, i):
        type(self).reads += 1
        return super().__getitem__(i)


@pytest.mark.parametrize("name", ["policy_gaussian", "policy_gaussian_public", "weighted_gaussian",
                                  "dp_sips", "count_gaussian"])
def test_a_release_reads_the_names_of_the_items_it_releases_only(monkeypatch, name):
    """Candidates' names are fetched from the vocabulary (on Dask, from the workers) only for
    the items released: 1,000 candidates, a few released."""
    users = [(f"u{u}", ["common"] * 3 + [f"rare{u}"]) for u in range(1000)]
    data = ItemSets.from_user_items(users)
    monkeypatch.setattr(data.vocab, "_strings", _CountingList(data.vocab.strings))
    monkeypatch.setattr(_CountingList, "reads", 0)
    public = ["common", "other"] if name.endswith("_public") else []
    kw = {"public_items": public} if public else {}
    release = make_mechanism(name, epsilon=1.0, delta=1e-5, **kw).release(data, key=KEYS[0])
    assert "common" in release.items
    # released items outside P; and, to confirm each hash match by name, the held items of P
    expected = len(set(release.items) - set(public)) + len(set(public) & set(data.vocab.strings))
    assert _CountingList.reads == expected


@pytest.mark.parametrize("mode", [0, 1])
def test_rows_within_the_cap_are_kept_as_they_are(mode):
    """bound_rows returns its input arrays when no row is over the cap and rows are unordered
    (no copy); they equal what the compiled loop gives. One row over the cap: the loop runs."""
    from dp_vocab.bounding import _kernels as bk
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 6, 200)
    indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    items = rng.integers(0, 50, indptr[-1]).astype(np.int32)
    counts = rng.integers(1, 9, indptr[-1]).astype(np.int32)
    seeds = rng.integers(0, 2 ** 63, 200).astype(np.uint64)
    hashes = rng.integers(0, 2 ** 63, 50).astype(np.uint64)
    tie, rank = np.zeros(1, np.int64), np.zeros(50, np.int64)
    args = (indptr, items, counts, seeds, hashes, tie, rank)
    got = bk.bound_rows(*args, 5, mode, False)
    assert got[0] is indptr and got[1] is items and got[2] is counts
    loop = bk._KERNELS[mode == 0, False](*args, 5, mode, False)
    assert all(np.array_equal(a, b) for a, b in zip(got, loop))
    capped = bk.bound_rows(*args, 4, mode, False)
    assert capped[1] is not items and np.diff(capped[0]).max() == 4
