"""Token sequences by user, and the level-wise n-gram weights DPNE asks of them.

An n-gram is a tuple of tokens; it is joined into a string (``joiner``) only to hash it as the
bounding does and to output it. The extractor drops tokens that contain the joiner wherever it
joins tokens, so joining is one-to-one.

The level-n candidates C_n = {g : g[:-1] ∈ S_{n−1} and g[1:] ∈ S_{n−1}} depend only on the
released (public) S_{n−1}: ``CandidateJoin`` enumerates and counts them exactly. Private data:
``TokenCorpus`` and the weights it yields are never written to an output.
"""

from __future__ import annotations

from array import array
from collections import defaultdict

import numpy as np

from ..compiled import lazy_module
from ..bounding import BoundedSets, BoundedRows, Bounding, SequenceData, Weighting, user_weights
from ..errors import ParameterError
from .builder import TokenRuns, TokenRunsBuilder
from .itemsets import ItemSets
from .vocabulary import Vocabulary
from ..privacy.noise import RandomSource, uniform_below

_kernels = lazy_module("dp_vocab.bounding._ngram_kernels")   # numba: imported on first use

Gram = tuple[str, ...]   # an n-gram: its tokens


class TokenCorpus(SequenceData):
    """Token-id sequences by user, for level-wise n-gram mechanisms (DPNE), in this process's
    memory: the local backend's token corpus (``bounding.SequenceData``; a Dask partition is
    one too).

    ``tokens`` (int32 ids into ``vocab``), ``seq_ptr`` (int64 offsets of sequences: a document,
    or a run of it between dropped over-long tokens), ``seq_user`` (int32 user row per sequence).
    Private data, like ItemSets.
    """

    __slots__ = ("vocab", "user_ids", "tokens", "seq_ptr", "seq_user", "joiner")

    def __init__(self, vocab, user_ids, tokens, seq_ptr, seq_user, joiner=" "):
        self.vocab, self.user_ids, self.joiner = vocab, list(user_ids), joiner
        self.tokens = np.asarray(tokens, dtype=np.int32)
        self.seq_ptr = np.asarray(seq_ptr, dtype=np.int64)
        self.seq_user = np.asarray(seq_user, dtype=np.int32)

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    def without_users(self, user_ids) -> "TokenCorpus":
        gone = set(user_ids)
        drop = {i for i, u in enumerate(self.user_ids) if u in gone}
        keep_users = [i for i in range(self.n_users) if i not in drop]
        remap = np.full(self.n_users, -1, dtype=np.int64)
        remap[keep_users] = np.arange(len(keep_users))
        keep_seq = np.flatnonzero(remap[self.seq_user] >= 0)
        lengths = np.diff(self.seq_ptr)[keep_seq]
        ptr = np.zeros(keep_seq.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        take = np.concatenate([np.arange(self.seq_ptr[s], self.seq_ptr[s + 1]) for s in keep_seq]) \
            if keep_seq.size else np.zeros(0, np.int64)
        return TokenCorpus(self.vocab, [self.user_ids[i] for i in keep_users], self.tokens[take],
                           ptr, remap[self.seq_user[keep_seq]], self.joiner)

    @classmethod
    def from_user_runs(cls, pairs, joiner: str) -> "TokenCorpus":
        """From (user id, token runs) pairs; a user may appear several times (rows in order of
        first appearance)."""
        builder = TokenRunsBuilder()
        for user, runs in pairs:
            builder.add_runs(user, runs)
        return cls.from_runs(builder.build(), joiner)

    @classmethod
    def from_runs(cls, runs: TokenRuns, joiner: str) -> "TokenCorpus":
        """Wrap what the builder made (``data.builder``)."""
        return cls(runs.vocab, runs.user_ids, runs.tokens, runs.seq_ptr, runs.seq_user, joiner)

    # -- what mechanisms ask of user data (the ``bounding.UserData`` protocol) ------------------
    def ngram_levels(self, bounding: Bounding) -> "TokenLevels":
        return TokenLevels(self, bounding)

    def __repr__(self) -> str:
        return "<TokenCorpus (private data)>"


def _level_itemsets(corpus: TokenCorpus, users: np.ndarray, keys_at: np.ndarray, names_of):
    """Per-user distinct candidates from the (user, candidate key) of every position holding
    one (memory: one packed int64 per position, sorted in place).

    Returns (ItemSets over this level's present candidates, their sorted int64 keys)."""
    span = int(keys_at.max()) + 1 if keys_at.size else 1
    if corpus.n_users < (2 ** 62) // span:   # (user, key) packed in one int64: one sort
        packed = users.astype(np.int64)
        packed *= span
        packed += keys_at
        packed.sort()
        users, keys_at, counts = _kernels.runs(packed, span)
        del packed
    else:                                    # too many for one word: sort by both
        order = np.lexsort((keys_at, users))
        users, keys_at = users[order], keys_at[order]
        new = np.ones(users.size, dtype=bool)
        new[1:] = (users[1:] != users[:-1]) | (keys_at[1:] != keys_at[:-1])
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, users.size))
        users, keys_at = users[starts], keys_at[starts]
    # (users, keys_at): distinct (user, candidate) pairs sorted by user; counts: occurrences
    keys, item_ids = _sorted_distinct(keys_at, span)
    del keys_at
    indptr = np.zeros(corpus.n_users + 1, dtype=np.int64)
    np.cumsum(np.bincount(users, minlength=corpus.n_users), out=indptr[1:])
    names = names_of(keys)
    vocab = Vocabulary.from_index(dict(zip(names, range(len(names)))))
    if len(vocab) != keys.size:   # joining must be one-to-one (the extractor's joiner rule)
        raise ValueError("two level candidates share a name: the joiner occurs inside tokens")
    return ItemSets(vocab, corpus.user_ids, indptr, item_ids,
                    np.minimum(counts, 2 ** 31 - 1)), keys


def _sorted_distinct(values: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values sorted, each value's index among them as int32): what
    ``np.unique(values, return_inverse=True)`` gives, for int64 values in [0, span). A bitmap
    of the span when it is no larger than the values (two passes, no sort); else polars'
    dense rank on every core (numpy's sort-based unique runs on one)."""
    if not values.size:
        return values[:0].copy(), np.zeros(0, dtype=np.int32)
    if span <= 64 * values.size:
        return _kernels.distinct_by_bitmap(values, span)
    import polars as pl
    ids = (pl.Series(values).rank("dense") - 1).cast(pl.Int32).to_numpy()
    distinct = np.empty(int(ids.max()) + 1, dtype=values.dtype)
    distinct[ids] = values
    return distinct, ids


class CandidateJoin:
    """C_n from the released (n−1)-grams S (public, sorted): g with g[:-1] ∈ S and g[1:] ∈ S.

    Candidate key: index(g[:-1])·|S| + index(g[1:]) (int64 for |S| < 2^31). |C_n| is counted
    exactly by grouping S by the overlapping (n−2)-gram; ``sample`` draws distinct uniform
    members by rejection."""

    def __init__(self, prev: list[Gram]):
        if len(prev) >= 2 ** 31:
            raise ParameterError("dpne level size", "2^31 or more released n-grams",
                                 "fewer than 2^31", "Lower epsilon or max_items_per_user.")
        self.prev, self.m = prev, len(prev)
        self.index = {g: i for i, g in enumerate(prev)}
        by_suffix, by_prefix = defaultdict(list), defaultdict(list)
        for idx, g in enumerate(prev):
            by_suffix[g[1:]].append(idx)
            by_prefix[g[:-1]].append(idx)
        self.blocks = [(by_suffix[k], by_prefix[k]) for k in sorted(set(by_suffix) & set(by_prefix))]
        sizes = np.array([len(a) * len(b) for a, b in self.blocks], dtype=np.int64)
        self.cum = np.cumsum(sizes)
        self.size = int(self.cum[-1]) if sizes.size else 0

    def key_of(self, gram: Gram) -> int:
        """The key of a member of C_n (its prefix and suffix are in S by construction)."""
        return self.index[gram[:-1]] * self.m + self.index[gram[1:]]

    def gram_of(self, key: int) -> Gram:
        a, b = divmod(int(key), self.m)
        return self.prev[a] + self.prev[b][-1:]

    def sample(self, k: int, exclude: set[Gram], random: RandomSource) -> list[Gram]:
        """``k`` distinct uniform members of C_n outside ``exclude`` (members, as token
        tuples; a set of them costs one tuple hash each, their keys two dict lookups)."""
        chosen: dict[int, Gram] = {}
        while len(chosen) < k:
            for r in uniform_below(self.size, 2 * (k - len(chosen)), random).tolist():
                blk = int(np.searchsorted(self.cum, r, side="right"))
                off = r - (int(self.cum[blk - 1]) if blk else 0)
                a_ids, b_ids = self.blocks[blk]
                key = a_ids[off // len(b_ids)] * self.m + b_ids[off % len(b_ids)]
                if key in chosen:
                    continue
                gram = self.gram_of(key)
                if gram in exclude:
                    continue
                chosen[key] = gram
                if len(chosen) == k:
                    break
        return list(chosen.values())


class TokenLevels:
    """DPNE levels over in-memory token sequences: per-position ids of the released
    (n−1)-grams, from which level-n candidates are read off in vectorised passes.

    Memory: per position an int32 user, an int8 room to the sequence end and an int32 id in
    S_{n−1}; the positions holding a level-n candidate and its int64 key."""

    def __init__(self, corpus: TokenCorpus, bounding: Bounding):
        self.corpus, self.bounding, self.joiner = corpus, bounding, corpus.joiner
        lengths = np.diff(corpus.seq_ptr)
        self.pos_user = np.repeat(corpus.seq_user, lengths)
        # tokens from position i to its sequence end, capped at 127 (n ≤ 64): n-grams stay
        # inside their sequence
        room = np.repeat(corpus.seq_ptr[1:], lengths)
        room -= np.arange(room.size, dtype=np.int64)
        self.room = np.minimum(room, 127).astype(np.int8)
        del room
        self.s_prev: np.ndarray | None = None   # id in S_{n−1} of the (n−1)-gram at i, or −1
        self.prev: list[Gram] = []
        self._cand: tuple[np.ndarray | None, np.ndarray] = (None, np.zeros(0, np.int64))

    def _candidates(self, n: int) -> tuple[np.ndarray | None, np.ndarray]:
        """(positions holding a level-n candidate, or None for every position; its key)."""
        if n == 1:
            return None, self.corpus.tokens
        s, m = self.s_prev, len(self.prev)
        if s is None:
            raise ValueError(f"level {n}: the released level {n - 1} must be set first")
        return _kernels.candidate_keys(s, self.room, n, m)

    def _users_at(self, pos: np.ndarray | None) -> np.ndarray:
        return self.pos_user if pos is None else self.pos_user[pos]

    def _grams_of(self, n: int, keys: np.ndarray) -> list[Gram]:
        """The n-grams of candidate keys: (token,) at n = 1, else prev[a] + prev[b][-1:] for
        key a·|S_{n−1}| + b (``CandidateJoin.gram_of``, one array pass for the divisions)."""
        if n == 1:
            strings = self.corpus.vocab.strings
            return [(strings[k],) for k in keys.tolist()]
        prev, m = self.prev, len(self.prev)
        last = [g[-1:] for g in prev]
        return [prev[a] + last[b] for a, b in zip((keys // m).tolist(), (keys % m).tolist())]

    def level_rows(self, n: int, key: bytes,
                   bounding: Bounding | None = None) -> tuple[list[Gram], BoundedSets]:
        """Level n's candidates held by some user (present in the corpus), and every user's
        bounded row of them (≤ Δ0, level key ``key``) in keyed order; item ids index the list.
        ``bounding``: this level's cap, if not the levels' own."""
        grams, rows = self.level_item_rows(n, key, bounding)
        return grams, rows.bounded

    def level_item_rows(self, n: int, key: bytes,
                        bounding: Bounding | None = None) -> tuple[list[Gram], BoundedRows]:
        """``level_rows`` with the users' order words and the items' hashes (for backends
        that merge rows held apart)."""
        join_str = self.joiner.join
        self._cand = cand = self._candidates(n)
        grams: list[Gram] = []

        def names_of(keys: np.ndarray) -> list[str]:
            grams.extend(self._grams_of(n, keys))
            return [join_str(g) for g in grams]

        level, _ = _level_itemsets(self.corpus, self._users_at(cand[0]), cand[1], names_of)
        return grams, level.bounded_rows(key, bounding or self.bounding)

    def level_weights(self, n: int, key: bytes,
                      bounding: Bounding | None = None) -> tuple[list[Gram], np.ndarray]:
        """Positive level-n weights (user weights 1/√k on ≤ Δ0 candidates each)."""
        grams, b = self.level_rows(n, key, bounding)
        w = user_weights(b, len(grams), Weighting.L2)
        pos = np.flatnonzero(w > 0)
        return [grams[i] for i in pos.tolist()], w[pos]

    def replay(self, released: list[list[Gram]]) -> "TokenLevels":
        """Set S_1..S_m from the released levels in turn (a fresh partition on a worker)."""
        for n, grams in enumerate(released, 1):
            self._cand = self._candidates(n)
            self.set_released(n, grams)
        return self

    def set_released(self, n: int, grams: list[Gram]) -> None:
        """S_n (sorted token tuples, members of the level last weighed): mark the positions
        whose n-gram was released."""
        if n == 1:  # keys are token ids: a lookup table
            table = np.full(len(self.corpus.vocab), -1, dtype=np.int32)
            ids = np.array([self.corpus.vocab.get(g[0], -1) for g in grams], dtype=np.int64)
            table[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
            s = table[self.corpus.tokens]
        else:
            join = CandidateJoin(self.prev)  # grams are members of C_n: keys, then positions
            keys = np.array([join.key_of(g) for g in grams], dtype=np.int64)
            pos, cand = self._cand
            s = np.full(self.corpus.tokens.size, -1, dtype=np.int32)
            if pos is not None and cand.size and keys.size:
                order = np.argsort(keys)
                sorted_keys = keys[order]
                # where each prefix id's released keys start: a position's key is searched
                # among its prefix's keys only
                m = len(self.prev)
                starts = np.searchsorted(sorted_keys, np.arange(m + 1, dtype=np.int64) * m)
                _kernels.mark_released(pos, cand, m, starts, sorted_keys, order.astype(np.int32), s)
        self.s_prev, self.prev = s, list(grams)
