"""Token sequences by user, and the public candidate domain of DPNE's levels (the levels'
data: ``token_levels``).

An n-gram is a tuple of tokens; it is joined into a string (``joiner``) only to hash it as the
bounding does and to output it. The extractor drops tokens that contain the joiner wherever it
joins tokens, so joining is one-to-one.

The level-n candidates C_n = {g : g[:-1] ∈ S_{n−1} and g[1:] ∈ S_{n−1}} depend only on the
released (public) S_{n−1}: ``CandidateJoin`` enumerates and counts them exactly. Private data:
``TokenCorpus`` and the weights it yields are never written to an output.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..bounding import Bounding, SequenceData
from ..errors import ParameterError
from .builder import TokenRuns, TokenRunsBuilder
from .token_levels import Gram, LevelGrams, TokenLevels  # noqa: F401 - the levels' API
from ..privacy.noise import RandomSource, uniform_below


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
        # the blocks laid out flat: block i's prefixes are a_ids[a_start[i]:][:prefixes[i]]
        self.prefixes = np.array([len(a) for a, _ in self.blocks], dtype=np.int64)
        self.suffixes = np.array([len(b) for _, b in self.blocks], dtype=np.int64)
        self.a_ids = np.fromiter((i for a, _ in self.blocks for i in a), dtype=np.int64,
                                 count=int(self.prefixes.sum()))
        self.b_ids = np.fromiter((i for _, b in self.blocks for i in b), dtype=np.int64,
                                 count=int(self.suffixes.sum()))
        self.a_start = np.concatenate([[0], np.cumsum(self.prefixes)[:-1]]).astype(np.int64)
        self.b_start = np.concatenate([[0], np.cumsum(self.suffixes)[:-1]]).astype(np.int64)
        self.block_sizes = self.prefixes * self.suffixes
        self.size = int(self.block_sizes.sum())

    def key_of(self, gram: Gram) -> int:
        """The key of a member of C_n (its prefix and suffix are in S by construction)."""
        return self.index[gram[:-1]] * self.m + self.index[gram[1:]]

    def gram_of(self, key: int) -> Gram:
        a, b = divmod(int(key), self.m)
        return self.prev[a] + self.prev[b][-1:]

    def pairs_at(self, blk: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The prefix and suffix ids of member ``off`` (row-major) of each block ``blk``."""
        cols = self.suffixes[blk]
        return (self.a_ids[self.a_start[blk] + off // cols],
                self.b_ids[self.b_start[blk] + off % cols])

    def sample(self, k: int, exclude: np.ndarray, random: RandomSource) -> list[Gram]:
        """``k`` distinct uniform members of C_n whose keys are not in ``exclude`` (sorted
        int64 keys: a binary search each, no set of the excluded n-grams)."""
        return _distinct_members(self, k, self.block_sizes, self.pairs_at, exclude, random)


class BandClasses:
    """C_n split into classes (i, j): the band i of a candidate's first token and the band j of
    its last (bands given for each member of S: ``first`` of its first token, ``last`` of its
    last). Class sizes are counted exactly per block of ``join`` (candidates g = S[a] + S[b][-1:]
    with S[a][1:] = S[b][:-1]); ``sample`` draws distinct uniform members of one class."""

    def __init__(self, join: CandidateJoin, first: np.ndarray, last: np.ndarray, bands: int):
        self.join, self.bands = join, int(bands)
        self.first = np.asarray(first, dtype=np.int64)
        self.last = np.asarray(last, dtype=np.int64)
        blocks = len(join.blocks)

        def grouped(ids_of, band):   # ids block-major, band-minor; counts per (block, band)
            blk = np.repeat(np.arange(blocks), [len(ids_of(b)) for b in join.blocks])
            ids = np.fromiter((i for b in join.blocks for i in ids_of(b)), dtype=np.int64,
                              count=blk.size)
            order = np.lexsort((ids, band[ids], blk))
            counts = np.bincount(blk * self.bands + band[ids], minlength=blocks * self.bands)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).reshape(blocks, self.bands)
            return ids[order], counts.reshape(blocks, self.bands), starts
        self.a_ids, self.a_counts, self.a_starts = grouped(lambda b: b[0], self.first)
        self.b_ids, self.b_counts, self.b_starts = grouped(lambda b: b[1], self.last)
        # |class (i, j)| = Σ_blocks (prefixes of band i)·(suffixes of band j), flattened i·B + j
        self.sizes = (self.a_counts.T @ self.b_counts).ravel()

    def class_of(self, keys: np.ndarray) -> np.ndarray:
        a, b = np.divmod(np.asarray(keys, dtype=np.int64), self.join.m)
        return self.first[a] * self.bands + self.last[b]

    def sample(self, k: int, cls: int, exclude: np.ndarray, random: RandomSource) -> list[Gram]:
        """``k`` distinct uniform members of class ``cls`` whose keys are not in ``exclude``
        (sorted int64): a block with probability ∝ its members of the class, then a uniform
        prefix of band i and suffix of band j in it, held and repeated keys rejected."""
        i, j = divmod(int(cls), self.bands)

        def pair_at(blk: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            cols = self.b_counts[blk, j]
            return (self.a_ids[self.a_starts[blk, i] + off // cols],
                    self.b_ids[self.b_starts[blk, j] + off % cols])
        return _distinct_members(self.join, k, self.a_counts[:, i] * self.b_counts[:, j],
                                 pair_at, exclude, random)


def block_shape(join: CandidateJoin) -> tuple[np.ndarray, np.ndarray]:
    """Each block's number of prefixes |A| and suffixes |B| (its size is |A|·|B|)."""
    return join.prefixes, join.suffixes


class BlockClasses:
    """C_n split into classes of whole blocks of ``join`` (the candidates S[a] + S[b][-1:]
    sharing one (n−2)-gram): ``block_class`` gives each block's class. Sizes are exact;
    ``sample`` draws distinct uniform members of one class."""

    def __init__(self, join: CandidateJoin, block_class: np.ndarray, classes: int):
        self.join = join
        self.block_class = np.asarray(block_class, dtype=np.int64)
        self.sizes = np.zeros(int(classes), dtype=np.int64)
        np.add.at(self.sizes, self.block_class, join.block_sizes)
        self.block_of = np.full(join.m, -1, dtype=np.int64)   # as a prefix: one block each
        self.block_of[join.a_ids] = np.repeat(np.arange(len(join.blocks)), join.prefixes)

    def class_of(self, keys: np.ndarray) -> np.ndarray:
        a = np.asarray(keys, dtype=np.int64) // self.join.m
        return self.block_class[self.block_of[a]]

    def sample(self, k: int, cls: int, exclude: np.ndarray, random: RandomSource) -> list[Gram]:
        """``k`` distinct uniform members of class ``cls`` not in ``exclude`` (sorted int64):
        a block with probability ∝ its size, then a uniform pair in it; held and repeated keys
        rejected."""
        return _distinct_members(self.join, k,
                                 np.where(self.block_class == cls, self.join.block_sizes, 0),
                                 self.join.pairs_at, exclude, random)


def _distinct_members(join: CandidateJoin, k: int, per_block: np.ndarray, pair_at,
                      exclude: np.ndarray, random: RandomSource) -> list[Gram]:
    """``k`` distinct uniform members of a class laid out block by block (``per_block[i]`` of
    them in block i; ``pair_at(blocks, offsets)`` gives their prefix and suffix ids) whose keys
    are not in ``exclude`` (sorted int64): a block with probability ∝ its members, then a
    uniform member in it; held and repeated keys rejected."""
    cum = np.cumsum(per_block)
    exclude = np.asarray(exclude, dtype=np.int64)
    chosen: dict[int, Gram] = {}
    while len(chosen) < k:
        r = uniform_below(int(cum[-1]), 2 * (k - len(chosen)), random)
        blk = np.searchsorted(cum, r, side="right")
        a, b = pair_at(blk, r - (cum[blk] - per_block[blk]))
        for key in (a * join.m + b).tolist():
            if key in chosen:
                continue
            at = int(np.searchsorted(exclude, key))
            if at < exclude.size and exclude[at] == key:
                continue
            chosen[key] = join.gram_of(key)
            if len(chosen) == k:
                break
    return list(chosen.values())
