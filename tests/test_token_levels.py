"""DPNE's compact level data (``data.token_levels``) against a direct reference: each user's
n-grams counted in Python, capped by one ``bound_sets`` call over all users. Tiny chunk sizes
put chunk boundaries everywhere (a user alone, users split across chunks' edges); both ways of
finding a level's present candidates (the key-span bitmap, sorted chunk keys) are run."""

from collections import Counter

import numpy as np
import pytest

from dp_vocab.bounding import Bounding, Priority, bound_sets, string_ties, user_keys
from dp_vocab.data.itemsets import item_hashes
from dp_vocab.data.token_corpus import CandidateJoin, TokenCorpus
from dp_vocab.data.token_levels import LevelGrams, TokenLevels
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.registry import make_mechanism

KEY = bytes(range(32))
TOKENS = [f"t{i}" for i in range(7)] + ["é", "a"]


class Listed:
    """A public list: the first few tokens, ranked by name."""

    items = {"t0": 0, "t2": 1, "é": 2}

    def ranks(self, hashes, names_of):
        return np.array([self.items.get(s, -1) for s in names_of(np.arange(hashes.size))],
                        dtype=np.int64)


def _corpus(rng) -> tuple[TokenCorpus, dict]:
    """A random corpus; users' runs interleave, some users appear several times."""
    n_users = int(rng.integers(1, 12))
    runs: dict = {}
    pairs = []
    for _ in range(int(rng.integers(1, 30))):
        u = f"u{int(rng.integers(0, n_users))}"
        run = [TOKENS[int(i)] for i in rng.integers(0, int(rng.integers(2, len(TOKENS) + 1)),
                                                    int(rng.integers(0, 12)))]
        pairs.append((u, [run]))
        runs.setdefault(u, []).append(run)
    return TokenCorpus.from_user_runs(pairs, " "), runs


def _reference(corpus, runs, n, prev, key, bounding):
    """(present n-grams sorted by level key, the bounded sets of one bound_sets call)."""
    prev_set = set(prev)
    index = {g: i for i, g in enumerate(prev)}
    held = {u: Counter(tuple(r[i:i + n]) for r in rs for i in range(len(r) - n + 1)
                       if n == 1 or (tuple(r[i:i + n - 1]) in prev_set
                                     and tuple(r[i + 1:i + n]) in prev_set))
            for u, rs in runs.items()}
    present = {g for c in held.values() for g in c}
    if n == 1:
        vocab = corpus.vocab
        present_sorted = sorted(present, key=lambda g: vocab.id(g[0]))
    else:
        present_sorted = sorted(present, key=lambda g: index[g[:-1]] * len(prev) + index[g[1:]])
    ids = {g: i for i, g in enumerate(present_sorted)}
    indptr, items, counts = [0], [], []
    for u in corpus.user_ids:
        row = sorted((ids[g], c) for g, c in held.get(u, {}).items())
        items += [i for i, _ in row]
        counts += [c for _, c in row]
        indptr.append(len(items))
    names = [" ".join(g) for g in present_sorted]
    hashes = item_hashes(names)
    b = bound_sets(np.array(indptr, np.int64), np.array(items, np.int32),
                   np.array(counts, np.int32), names, hashes, string_ties(names, hashes),
                   user_keys(corpus.user_ids, key), bounding)
    return present_sorted, hashes, b


@pytest.mark.parametrize("seed", range(40))
def test_compact_levels_equal_the_direct_reference(seed):
    rng = np.random.default_rng(seed)
    corpus, runs = _corpus(rng)
    cap = int(rng.integers(1, 6))
    bounding = Bounding(cap, Priority(int(rng.integers(0, 2))))
    if seed % 3 == 0:   # level 1 keeps ≤ 1 unlisted token a user first
        bounding = Bounding(cap, Priority.OWN_COUNT, max_outside=1, listed=Listed())
    chunk = int(rng.integers(1, 8))
    levels = [TokenLevels(corpus, bounding, chunk_positions=chunk),
              TokenLevels(corpus, bounding, chunk_positions=chunk, bitmap_bytes=0),
              TokenLevels(corpus, bounding)]
    prev: list = []
    for n in range(1, 5):
        want, hashes, b = _reference(corpus, runs, n, prev, KEY, bounding)
        for lv in levels:
            grams, rows = lv.level_item_rows(n, KEY)
            assert list(grams) == want
            assert grams.take(np.arange(len(grams))[::-1]) == want[::-1]
            assert rows.hashes.tolist() == hashes.tolist()
            got = rows.bounded
            for name in ("order", "indptr", "items", "counts"):
                assert getattr(got, name).tolist() == getattr(b, name).tolist(), name
            # the same rows a chunk at a time, users in keyed order
            g2, chunks = lv.level_chunks(n, KEY)
            assert g2.keys.tolist() == grams.keys.tolist()
            assert _rows_in_order(chunks) == _rows_in_order([got])
            if n > 1:   # level keys are the candidate keys of C_n
                join = CandidateJoin(prev)
                assert grams.keys.tolist() == [join.key_of(g) for g in want]
                assert grams.keys.tolist() == sorted(grams.keys.tolist())
        # release a random part of the present n-grams (members of C_n, as a release is)
        prev = sorted(g for g in want if rng.random() < 0.7)
        for lv in levels:
            lv.set_released(n, prev)
        if not prev:
            break


def _rows_in_order(parts) -> list:
    """Each part's rows (items, counts) in its ``order``, parts end to end."""
    return [(b.items[b.indptr[r]:b.indptr[r + 1]].tolist(),
             b.counts[b.indptr[r]:b.indptr[r + 1]].tolist())
            for b in parts for r in b.order.tolist()]


@pytest.mark.parametrize("policy", ["weighted", "l2_descent"])
def test_a_release_does_not_depend_on_the_chunk_size(monkeypatch, policy):
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(30)]
    pairs = [(f"u{int(rng.integers(0, 400))}",
              [[words[int(i)] for i in rng.zipf(1.3, int(rng.integers(1, 15))) % 30]])
             for _ in range(3000)]
    corpus = TokenCorpus.from_user_runs(pairs, " ")
    m = make_mechanism("dpne", epsilon=4.0, delta=1e-5, max_n=4, policy=policy, eta=0.3,
                       max_ngrams_per_user=6)
    want = m.release(corpus, key=KEY, random=RandomSource(3))
    assert sum(1 for g in want.items if " " in g) > 10
    for chunk in (1, 17, 500):
        monkeypatch.setattr("dp_vocab.data.token_levels.CHUNK_POSITIONS", chunk)
        got = m.release(corpus, key=KEY, random=RandomSource(3))
        assert got.items == want.items and got.details == want.details


def test_levels_must_be_released_in_turn():
    corpus, _ = _corpus(np.random.default_rng(1))
    lv = TokenLevels(corpus, Bounding(3))
    with pytest.raises(ValueError, match="level 1 must be set first"):
        lv.level_rows(2, KEY)


def test_level_grams_subsets_keep_keys_and_hashes():
    prev = [("a",), ("b",), ("c",)]
    grams = LevelGrams.of_grams([("a", "b"), ("c", "a"), ("b", "b")], prev, " ")
    assert grams.keys.tolist() == [1, 6, 4]
    assert grams.hashes.tolist() == item_hashes(["a b", "c a", "b b"]).tolist()
    sub = grams.subset(np.array([2, 0]))
    assert list(sub) == [("b", "b"), ("a", "b")] and sub[0] == ("b", "b")
    assert sub.hashes.tolist() == grams.hashes[[2, 0]].tolist()
    assert sub.sorted_keys().tolist() == [1, 4]


def test_zero_weight_sample_excludes_held_keys():
    prev = [("a",), ("b",), ("c",), ("d",)]
    join = CandidateJoin(prev)   # C_2: all 16 pairs
    held = np.array(sorted(join.key_of(g) for g in [("a", "a"), ("b", "c"), ("d", "d")]))
    for seed in range(20):
        got = join.sample(13, held, RandomSource(seed))
        assert len(set(got)) == 13
        assert not {join.key_of(g) for g in got} & set(held.tolist())
