"""DPNE's levels over token sequences held in memory: each level's candidates held by some
user, every user's bounded row of them, and the marks of the released level.

Level state is one int32 per position (``s``: the id in S_{n−1} of the (n−1)-gram starting
there, or −1), overwritten in place by each released level; nothing else per position. A
level's (user, candidate) rows are built user chunk by user chunk and capped chunk by chunk
(a user's cap depends only on its own row, its seed and the public item hashes), so the level
holds its bounded rows (8 bytes per kept pair) and one chunk, never a per-position array of
keys. Candidates are int64 keys (``CandidateJoin.key_of``); their item hashes are computed in
batches, and their tuples and strings are made only when read (the released n-grams, hash
ties). Private data: the rows are pre-noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np

from ..bounding import BoundedRows, BoundedSets, Bounding, Weighting, bound_sets, keyed_order
from ..bounding import string_ties, user_keys, user_weights
from ..compiled import lazy_module
from .vocabulary import Vocabulary, item_hashes

_kernels = lazy_module("dp_vocab.bounding._ngram_kernels")   # numba: imported on first use

Gram = tuple[str, ...]   # an n-gram: its tokens

CHUNK_POSITIONS = 1 << 22   # positions whose users' rows are built and capped at once
HASH_BATCH = 1 << 17        # names joined and hashed at once
# the present candidates are found with a bitmap of the key span (and its rank counts) when
# they take at most this many bytes or two per position, else by sorting each chunk's keys
BITMAP_BYTES = 1 << 27


class LevelGrams(Sequence[Gram]):
    """A level's candidates as int64 keys, read as token tuples only on demand.

    ``keys``: at level n ≥ 2 the candidate keys of C_n (``CandidateJoin.key_of``), at level 1
    ids into the level's unigram table. ``hashes``: each joined n-gram's item hash (uint64),
    computed in batches on first use."""

    def __init__(self, keys: np.ndarray, grams_of: Callable[[np.ndarray], list[Gram]],
                 joiner: str, hashes: np.ndarray | None = None):
        self.keys = np.asarray(keys, dtype=np.int64)
        self.joiner = joiner
        self._grams_of = grams_of
        self._hashes = hashes

    @classmethod
    def unigrams(cls, ids: np.ndarray, strings: list[str], joiner: str,
                 hashes: np.ndarray | None = None) -> "LevelGrams":
        """Level 1: the tokens ``strings[ids]``."""
        return cls(ids, lambda ks: [(strings[k],) for k in ks.tolist()], joiner, hashes)

    @classmethod
    def joined(cls, keys: np.ndarray, prev: list[Gram], joiner: str) -> "LevelGrams":
        """Level n ≥ 2: key a·|S| + b is prev[a] + prev[b][-1:] (S = ``prev``, sorted)."""
        m = len(prev)
        last = [g[-1:] for g in prev]

        def grams_of(ks: np.ndarray) -> list[Gram]:
            return [prev[a] + last[b] for a, b in zip((ks // m).tolist(), (ks % m).tolist())]
        return cls(keys, grams_of, joiner)

    @classmethod
    def of_grams(cls, grams: list[Gram], prev: list[Gram] | None, joiner: str) -> "LevelGrams":
        """Given n-grams (level 1 when ``prev`` is None, else members of the C_n of
        S_{n−1} = ``prev``), keyed as a level's are."""
        if prev is None:
            return cls(np.arange(len(grams), dtype=np.int64),
                       lambda ks: [grams[k] for k in ks.tolist()], joiner)
        index = {g: i for i, g in enumerate(prev)}
        m = len(prev)
        keys = np.fromiter((index[g[:-1]] * m + index[g[1:]] for g in grams), dtype=np.int64,
                           count=len(grams))
        return cls.joined(keys, prev, joiner)

    @property
    def hashes(self) -> np.ndarray:
        if self._hashes is None:
            out = np.empty(self.keys.size, dtype=np.uint64)
            for i in range(0, self.keys.size, HASH_BATCH):
                names = self.names_at(np.arange(i, min(i + HASH_BATCH, self.keys.size)))
                out[i:i + len(names)] = item_hashes(names)
            self._hashes = out
        return self._hashes

    def __len__(self) -> int:
        return self.keys.size

    def __getitem__(self, i):   # type: ignore[override]
        at = range(len(self))[i]   # a range for a slice, an index (IndexError past the end)
        if isinstance(at, range):
            return self.take(np.asarray(at, dtype=np.int64))
        return self._grams_of(self.keys[at:at + 1])[0]

    def __iter__(self) -> Iterator[Gram]:
        for i in range(0, len(self), HASH_BATCH):
            yield from self._grams_of(self.keys[i:i + HASH_BATCH])

    def take(self, positions: np.ndarray) -> list[Gram]:
        """The n-grams at ``positions`` (int array), in that order."""
        return self._grams_of(self.keys[np.asarray(positions, dtype=np.int64)])

    def names_at(self, positions: np.ndarray) -> list[str]:
        join = self.joiner.join
        return [join(g) for g in self.take(positions)]

    def subset(self, positions: np.ndarray) -> "LevelGrams":
        """The candidates at ``positions``, in that order (hashes kept if known)."""
        positions = np.asarray(positions, dtype=np.int64)
        return LevelGrams(self.keys[positions], self._grams_of, self.joiner,
                          None if self._hashes is None else self._hashes[positions])

    def sorted_keys(self) -> np.ndarray:
        return np.sort(self.keys)


class _Names(Sequence[str]):
    """The joined names of a level's candidates by id, made when read (ties, public lists)."""

    def __init__(self, grams: LevelGrams):
        self.grams = grams

    def __len__(self) -> int:
        return len(self.grams)

    def __getitem__(self, i):   # type: ignore[override]
        if isinstance(i, slice):
            return self.grams.names_at(np.arange(len(self))[i])
        return self.grams.names_at(np.array([i]))[0]


class _KnownRanks:
    """A public list's ranks of this level's candidates, looked up once for all chunks."""

    def __init__(self, ranks: np.ndarray):
        self._ranks = ranks

    def ranks(self, hashes: np.ndarray, names_of) -> np.ndarray:
        return self._ranks


class SequenceArrays(Protocol):
    """What the levels read of a token corpus (``token_corpus.TokenCorpus``)."""

    vocab: Vocabulary
    user_ids: list
    tokens: np.ndarray
    seq_ptr: np.ndarray
    seq_user: np.ndarray
    joiner: str


def _concat(parts: list[np.ndarray], dtype) -> np.ndarray:
    """The parts end to end, each freed once copied (peak: the total and one part)."""
    out = np.empty(sum(p.size for p in parts), dtype=dtype)
    o = 0
    parts.reverse()
    while parts:
        p = parts.pop()
        out[o:o + p.size] = p
        o += p.size
        del p
    return out


class TokenLevels:
    """DPNE levels over an in-memory token corpus (the module docstring says how they are
    held). ``chunk_positions``: how many positions' users are built and capped at once
    (default ``CHUNK_POSITIONS``); ``bitmap_bytes``: the largest bitmap of a level's key span
    with its rank counts (default ``BITMAP_BYTES`` or two bytes per position)."""

    def __init__(self, corpus: SequenceArrays, bounding: Bounding,
                 chunk_positions: int | None = None, bitmap_bytes: int | None = None):
        self.corpus, self.bounding, self.joiner = corpus, bounding, corpus.joiner
        self.chunk_positions = chunk_positions or CHUNK_POSITIONS
        self.bitmap_bytes = max(BITMAP_BYTES, 2 * corpus.tokens.size) if bitmap_bytes is None \
            else bitmap_bytes
        n_users = len(corpus.user_ids)
        lengths = np.diff(corpus.seq_ptr)
        # a user's sequences, wherever they lie in the corpus
        self.user_seq = np.argsort(corpus.seq_user, kind="stable").astype(np.int64)
        self.user_seq_ptr = np.zeros(n_users + 1, dtype=np.int64)
        np.cumsum(np.bincount(corpus.seq_user, minlength=n_users), out=self.user_seq_ptr[1:])
        self.user_positions = np.bincount(corpus.seq_user, weights=lengths,
                                          minlength=n_users).astype(np.int64)
        self.s = np.zeros(0, dtype=np.int32)   # id in S_{n−1} at each position, from level 1 on
        self.prev: list[Gram] = []
        self.level = 0   # the last level released

    # -- a level's candidates ----------------------------------------------------------------
    def _state(self, n: int) -> tuple:
        if n != self.level + 1:
            raise ValueError(f"level {n}: the released level {n - 1} must be set first")
        c = self.corpus
        return self.s, c.tokens, c.seq_ptr, self.user_seq_ptr, self.user_seq

    def _chunks(self, users: np.ndarray) -> Iterator[np.ndarray]:
        """``users`` in runs of at most ``chunk_positions`` positions (a larger user alone)."""
        cum = np.concatenate([[0], np.cumsum(self.user_positions[users])])
        a = 0
        while a < users.size:
            b = int(np.searchsorted(cum, cum[a] + self.chunk_positions, side="right")) - 1
            b = min(max(b, a + 1), users.size)
            yield users[a:b]
            a = b

    def _span(self, n: int) -> int:
        return len(self.corpus.vocab) if n == 1 else len(self.prev) ** 2

    def _present(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sorted keys of the level's candidates held by some user, the bitmap words and the
        bits below each word that give a key's id, or empty arrays: search the keys)."""
        state = self._state(n)
        m, span = len(self.prev), self._span(n)
        n_words = (span + 63) // 64
        if 12 * n_words <= self.bitmap_bytes:
            words = np.zeros(n_words, dtype=np.uint64)
            _kernels.mark_present(state[0], state[1], state[2], n, m, words)
            below, keys = _kernels.bitmap_index(words)
            return keys, words, below
        keys = np.zeros(0, dtype=np.int64)
        buf = np.empty(0, dtype=np.int64)
        for users in self._chunks(np.arange(len(self.corpus.user_ids))):
            need = int(self.user_positions[users].sum())
            if buf.size < need:
                buf = np.empty(need, dtype=np.int64)
            o = _kernels.users_keys(*state, users, n, m, buf)
            part = buf[:o]
            part.sort()
            keys = _kernels.merge_distinct(keys, part)
        return keys, np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32)

    def _grams(self, n: int, keys: np.ndarray) -> LevelGrams:
        if n == 1:
            vocab = self.corpus.vocab
            return LevelGrams.unigrams(keys, vocab.strings, self.joiner, vocab.hashes()[keys])
        return LevelGrams.joined(keys, self.prev, self.joiner)

    def _chunk_rows(self, n: int, key: bytes, bounding: Bounding, keyed: bool
                    ) -> tuple[LevelGrams, np.ndarray, Iterator[tuple[np.ndarray, BoundedSets]]]:
        """(the level's candidates held by some user, the users' order words, and chunk by
        chunk the users and their capped rows): users in row order, or in keyed order when
        ``keyed``; a chunk's rows follow its users, items ascending."""
        keys, bitmap, below = self._present(n)
        grams = self._grams(n, keys)
        order_words, seeds = user_keys(self.corpus.user_ids, key)
        hashes = grams.hashes
        names = _Names(grams)
        ties = string_ties(names, hashes)
        if bounding.max_outside is not None and bounding.listed is not None:
            bounding = replace(bounding, listed=_KnownRanks(
                bounding.listed.ranks(hashes, grams.names_at)))
        users_all = keyed_order(order_words) if keyed else np.arange(order_words.shape[0])

        def chunks() -> Iterator[tuple[np.ndarray, BoundedSets]]:
            state = self._state(n)
            scratch = np.empty(int(self.user_positions.max(initial=0)), dtype=np.int64)
            for users in self._chunks(users_all):
                size = int(self.user_positions[users].sum())
                items = np.empty(size, dtype=np.int32)
                counts = np.empty(size, dtype=np.int32)
                lengths = np.empty(users.size, dtype=np.int64)
                o = _kernels.users_rows(*state, users, n, len(self.prev), bitmap, below, keys,
                                        scratch, items, counts, lengths)
                indptr = np.zeros(users.size + 1, dtype=np.int64)
                np.cumsum(lengths, out=indptr[1:])
                # a user's cap depends on its own row, seed and the items' hashes only: the
                # same in any chunk
                yield users, bound_sets(indptr, items[:o], counts[:o], names, hashes, ties,
                                        (order_words[users], seeds[users]), bounding)
        return grams, order_words, chunks()

    def level_item_rows(self, n: int, key: bytes,
                        bounding: Bounding | None = None) -> tuple[LevelGrams, BoundedRows]:
        """Level n's candidates held by some user (sorted keys), and every user's bounded row
        of them (≤ Δ0, level key ``key``) with the users' order words and the items' hashes;
        item ids index the candidates. ``bounding``: this level's cap, if not the levels' own."""
        grams, order_words, chunks = self._chunk_rows(n, key, bounding or self.bounding, False)
        row_len = np.zeros(order_words.shape[0], dtype=np.int64)
        item_parts, count_parts = [], []
        listed_ranks = None
        for users, b in chunks:
            row_len[users] = np.diff(b.indptr)
            item_parts.append(b.items.copy())   # (the chunk's arrays may be its buffers)
            count_parts.append(b.counts.copy())
            listed_ranks = b.listed_ranks
        indptr = np.zeros(row_len.size + 1, dtype=np.int64)
        np.cumsum(row_len, out=indptr[1:])
        b = BoundedSets(keyed_order(order_words), indptr, _concat(item_parts, np.int32),
                        _concat(count_parts, np.int32), listed_ranks)
        return grams, BoundedRows(b, grams.hashes, grams.names_at, order_words)

    def level_rows(self, n: int, key: bytes,
                   bounding: Bounding | None = None) -> tuple[LevelGrams, BoundedSets]:
        """``level_item_rows`` without the order words (``bounding.NgramLevels``)."""
        grams, rows = self.level_item_rows(n, key, bounding)
        return grams, rows.bounded

    def level_chunks(self, n: int, key: bytes, bounding: Bounding | None = None
                     ) -> tuple[LevelGrams, Iterator[BoundedSets]]:
        """``level_rows`` a chunk of users at a time, users in keyed order (each chunk's
        ``order`` is its rows in order): the level's whole rows are never held."""
        grams, _, chunks = self._chunk_rows(n, key, bounding or self.bounding, True)
        return grams, (b for _, b in chunks)

    def level_weights(self, n: int, key: bytes,
                      bounding: Bounding | None = None) -> tuple[LevelGrams, np.ndarray]:
        """Level n's candidates with positive weight (user weights 1/√k on ≤ Δ0 candidates
        each), and their weights."""
        grams, b = self.level_rows(n, key, bounding)
        w = user_weights(b, len(grams), Weighting.L2)
        pos = np.flatnonzero(w > 0)
        return grams.subset(pos), w[pos]

    # -- the released level ------------------------------------------------------------------
    def replay(self, released: list[list[Gram]]) -> "TokenLevels":
        """Set S_1..S_m from the released levels in turn (a fresh partition on a worker)."""
        for n, grams in enumerate(released, 1):
            self.set_released(n, grams)
        return self

    def set_released(self, n: int, grams: list[Gram]) -> None:
        """S_n (sorted token tuples, members of C_n): mark in place the positions whose
        n-gram was released."""
        self._state(n)
        c = self.corpus
        if n == 1:   # keys are token ids: a table
            table = np.full(len(c.vocab), -1, dtype=np.int32)
            ids = np.array([c.vocab.get(g[0], -1) for g in grams], dtype=np.int64)
            table[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
            self.s = np.empty(c.tokens.size, dtype=np.int32)
            _kernels.mark_released(self.s, c.tokens, c.seq_ptr, 1, 1, np.zeros(1, np.int64),
                                   np.zeros(0, np.int64), table)
        else:
            m = len(self.prev)
            keys = LevelGrams.of_grams(grams, self.prev, self.joiner).keys
            order = np.argsort(keys)
            sorted_keys = keys[order]
            # where each prefix id's released keys start
            starts = np.searchsorted(sorted_keys, np.arange(m + 1, dtype=np.int64) * m)
            _kernels.mark_released(self.s, c.tokens, c.seq_ptr, n, m, starts, sorted_keys,
                                   order.astype(np.int32))
        self.prev, self.level = list(grams), n
