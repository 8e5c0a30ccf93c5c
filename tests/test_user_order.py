"""The keyed user order's PRF (SipHash-2-4 in numba), the encoding of user ids, and the
compiled uniform sample of the bounding kernel against plain Python."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab.bounding import _kernels, keyed_order, user_keys
from dp_vocab.bounding._siphash import _prf_words_serial, _prf_words_threaded, siphash24
from dp_vocab.bounding.user_order import encode_user_id, encode_user_ids, siphash_keys

# SipHash-2-4 with key 00 01 .. 0f on the messages 00 01 .. (n-1), n = 0..63: the test vectors
# of the SipHash paper (Aumasson & Bernstein 2012, appendix) and its reference implementation.
VECTORS = [
    0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
    0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
    0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
    0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
    0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
    0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
    0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
    0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
    0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
    0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
    0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
    0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
    0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
    0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
    0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
    0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
]


def test_siphash24_matches_the_reference_vectors():
    k0, k1 = np.frombuffer(bytes(range(16)), dtype="<u8").astype(np.uint64)
    # the messages at an offset inside a larger buffer, as user ids sit in theirs
    buf = np.concatenate([np.full(5, 0xAA, np.uint8), np.arange(64, dtype=np.uint8)])
    assert [int(siphash24(k0, k1, buf, 5, 5 + n)) for n in range(64)] == VECTORS


IDS = [["alice", "bob", ""], ["é", "ü\u00df", "a"], ["\ud800x", "b"], [1, -20, 300],
       [b"x", "x", 1], [10**30, 2], [b"", b"\x00"]]


@pytest.mark.parametrize("ids", IDS)
def test_encoding_of_many_ids_is_the_concatenation_of_each(ids):
    buf, offsets = encode_user_ids(ids)
    assert buf.tobytes() == b"".join(encode_user_id(u) for u in ids)
    assert np.diff(offsets).tolist() == [len(encode_user_id(u)) for u in ids]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=()), max_size=6), max_size=12))
def test_encoding_of_any_strings_is_the_concatenation_of_each(ids):
    """The non-ASCII path finds each id's byte offsets from the UTF-8 start bytes (lone
    surrogates included, as surrogatepass encodes them)."""
    test_encoding_of_many_ids_is_the_concatenation_of_each(ids)


@pytest.mark.parametrize("ids", [[True, 1], ["a", 1.5], [None]])
def test_ids_of_other_types_are_refused(ids):
    with pytest.raises(TypeError):
        encode_user_ids(ids)


def test_a_users_words_are_siphash_of_its_encoding_under_keys_from_the_run_key():
    key = b"k" * 32
    keys = siphash_keys(key)
    words, seeds = user_keys(["x", 7, b"z"], key)
    for row, uid in enumerate(["x", 7, b"z"]):
        enc = np.frombuffer(encode_user_id(uid), dtype=np.uint8)
        got = [int(siphash24(k0, k1, enc, 0, enc.size)) for k0, k1 in keys]
        assert words[row].tolist() + [int(seeds[row])] == got
    other, _ = user_keys(["x"], b"K" * 32)
    assert other[0].tolist() != words[0].tolist()


def test_the_four_words_are_computed_in_lockstep_exactly_as_one_at_a_time():
    """Ids of every length from 0 to 3 blocks: the four interleaved SipHash states of
    ``user_keys`` equal four separate ``siphash24`` calls."""
    key = bytes(range(32))
    keys = siphash_keys(key)
    ids = ["x" * n for n in range(25)] + ["é" * n for n in range(1, 12)]
    words, seeds = user_keys(ids, key)
    for row, uid in enumerate(ids):
        enc = np.frombuffer(encode_user_id(uid), dtype=np.uint8)
        got = [int(siphash24(k0, k1, enc, 0, enc.size)) for k0, k1 in keys]
        assert words[row].tolist() + [int(seeds[row])] == got


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000])
def test_threaded_and_serial_prf_kernels_agree(n):
    """Large corpora compute the users' words on every core, under a distinct name (numba's
    cache would otherwise serve the serial build for both); each row is its own, in any
    chunking, and equals one SipHash call per key."""
    keys = siphash_keys(bytes(range(32)))
    buf, offsets = encode_user_ids([f"user {i}" + "é" * (i % 9) for i in range(n)])
    serial = _prf_words_serial(buf, offsets, keys)
    threaded = _prf_words_threaded(buf, offsets, keys)
    assert _prf_words_threaded.py_func.__name__.endswith("_threads")
    assert serial.shape == (n, 4) and serial.tolist() == threaded.tolist()
    for row in range(0, n, 97):
        enc = buf[offsets[row]:offsets[row + 1]]
        assert serial[row].tolist() == [int(siphash24(k0, k1, enc, 0, enc.size))
                                        for k0, k1 in keys]


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**64 - 1)),
                max_size=30))
@settings(max_examples=100, deadline=None)
def test_keyed_order_is_the_lexicographic_order_of_the_words(rows):
    """Ties on the first word (forced here by small values) fall back to all three words."""
    words = np.array(rows, dtype=np.uint64).reshape(-1, 3)
    expect = sorted(range(len(rows)), key=lambda i: (rows[i], i))
    assert keyed_order(words).tolist() == expect


def _splitmix64(x: int) -> int:
    m = 2**64 - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_uniform_cap_keeps_the_k_smallest_keys(data):
    """Mode 0 (uniform, unordered): each user keeps its k items of smallest
    splitmix64(seed ^ splitmix64(hash)), equal keys by the tie rank, emitted in row order and
    then the k-th key's items by tie rank. Hashes from a few values force equal keys."""
    n_items = data.draw(st.integers(1, 40))
    hashes = np.array(data.draw(st.lists(st.integers(0, 5) | st.integers(0, 2**64 - 1),
                                         min_size=n_items, max_size=n_items)), dtype=np.uint64)
    ties = np.array(data.draw(st.permutations(range(n_items))), dtype=np.int64)
    rows = data.draw(st.lists(st.lists(st.integers(0, n_items - 1), unique=True), min_size=1,
                              max_size=6))
    k = data.draw(st.integers(1, 8))
    seeds = np.array(data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=len(rows),
                                        max_size=len(rows))), dtype=np.uint64)
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    items = np.array([i for r in rows for i in r], dtype=np.int32)
    counts = np.arange(items.size, dtype=np.int32) + 1
    ptr, kept, kept_counts = _kernels.bound_rows(indptr, items, counts, seeds, hashes, ties,
                                                 np.zeros(1, np.int64), k, 0, False)
    for r, row in enumerate(rows):
        keys = [_splitmix64(int(seeds[r]) ^ _splitmix64(int(hashes[i]))) for i in row]
        if len(row) > k:
            kth = sorted(keys)[k - 1]
            below = [i for i, x in zip(row, keys) if x < kth]
            at = sorted((i for i, x in zip(row, keys) if x == kth), key=lambda i: ties[i])
            expect = below + at[:k - len(below)]
        else:
            expect = row
        got = kept[ptr[r]:ptr[r + 1]].tolist()
        assert got == expect
        pos = {i: indptr[r] + j for j, i in enumerate(row)}
        assert kept_counts[ptr[r]:ptr[r + 1]].tolist() == [int(counts[pos[i]]) for i in got]


@given(st.lists(st.integers(0, 3) | st.integers(0, 2**64 - 1), min_size=1, max_size=300),
       st.data())
@settings(max_examples=100, deadline=None)
def test_kth_smallest_is_the_value_of_that_rank(values, data):
    a = np.array(values, dtype=np.uint64)
    k = data.draw(st.integers(0, a.size - 1))
    assert _kernels._kth_smallest(a.copy(), k) == sorted(values)[k]
    b = a.copy()
    _kernels._heapsort(b)   # the fallback after too many quickselect rounds
    assert b.tolist() == sorted(values)


def test_kth_smallest_on_inputs_that_defeat_median_of_three():
    """Sorted, reversed, organ-pipe and all-equal counts (a user chooses its own counts)."""
    n = 5001
    for a in (np.arange(n), np.arange(n)[::-1], np.r_[np.arange(n // 2), np.arange(n // 2, -1, -1)],
              np.full(n, 7), np.arange(n) % 3):
        for k in (0, n // 3, n - 1):
            assert _kernels._kth_smallest(a.astype(np.uint64), k) == np.sort(a)[k]


def test_uniform_cap_when_fewer_than_k_keys_lie_under_the_candidate_bound():
    """All items on one hash: every key of a row is equal, so for most seeds no key lies under
    the sampler's first bound 2^64·(k + 4√k + 8)/n and it takes its second, unbounded pass.
    Either way the k items first by tie rank are kept."""
    n, k = 200, 3
    hashes = np.full(n, 12345, dtype=np.uint64)
    ties = np.random.default_rng(0).permutation(n).astype(np.int64)
    items = np.arange(n, dtype=np.int32)
    counts = np.ones(n, dtype=np.int32)
    indptr = np.array([0, n], dtype=np.int64)
    bound = 2**64 * (k + 4 * k ** 0.5 + 8) / n
    expect = sorted(range(n), key=lambda i: ties[i])[:k]
    above = 0
    for seed in range(40):
        key = _splitmix64(seed ^ _splitmix64(12345))
        above += key > bound
        _, kept, _ = _kernels.bound_rows(indptr, items, counts, np.array([seed], np.uint64),
                                         hashes, ties, np.zeros(1, np.int64), k, 0, False)
        assert kept.tolist() == expect
    assert above > 20   # the second pass ran


@pytest.mark.parametrize("mode,ordered", [(0, False), (1, False), (2, True)])
def test_threaded_and_serial_bounding_kernels_agree(mode, ordered):
    """The kernels are compiled once serial and once threaded (under distinct names, or
    numba's cache would serve one build for both); rows are independent, so they agree."""
    rng = np.random.default_rng(mode)
    n_rows, n_items = 300, 500
    lengths = rng.integers(0, 60, n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    items = np.concatenate([rng.choice(n_items, k, replace=False) for k in lengths]).astype(np.int32)
    counts = rng.integers(1, 4, items.size).astype(np.int32)
    seeds = rng.integers(0, 2**63, n_rows).astype(np.uint64)
    hashes = rng.integers(0, 2**63, n_items).astype(np.uint64)
    ranks = rng.integers(0, 50, n_items).astype(np.int64)
    args = (indptr, items, counts, seeds, hashes, np.zeros(1, np.int64), ranks, 7, mode, ordered)
    uniform = mode == 0 and not ordered
    serial = _kernels._KERNELS[uniform, False](*args)
    threaded = _kernels._KERNELS[uniform, True](*args)
    assert _kernels._KERNELS[uniform, True].py_func.__name__.endswith("_threads")
    for a, b in zip(serial, threaded):
        assert a.tolist() == b.tolist()
    assert np.diff(serial[0]).tolist() == np.minimum(lengths, 7).tolist()


@pytest.mark.parametrize("key", ["ab" * 15, "zz" * 40, b"short", 12345])
def test_a_bad_key_is_refused_without_quoting_it(key):
    """The run key decides the user order: an error says its kind and length, not the key."""
    from dp_vocab.bounding import check_key
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match=r"key: expected .*not shown: a key is secret") as e:
        check_key(key)
    assert str(key) not in str(e.value) and "abab" not in str(e.value)
