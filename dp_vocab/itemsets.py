"""Interned item ids and per-user item sets in CSR form.

``ItemSets`` is the hand-over point between text processing and mechanisms: after it, everything
works on integer arrays. It holds private data (true per-user items and counts) and is never
written to an output.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator

import numpy as np

from .errors import CorpusError


def item_hashes(strings) -> np.ndarray:
    """The unkeyed 64-bit hash (blake2b) of each item's UTF-8 bytes, as uint64."""
    buf = b"".join(hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest()
                   for s in strings)
    return np.frombuffer(buf, dtype=np.uint64).copy()


class Vocabulary:
    """A bijection between item strings and dense ids 0..n-1, in first-seen order."""

    __slots__ = ("_strings", "_index", "_hashes")

    def __init__(self, strings: Iterable[str] = ()):
        self._strings: list[str] = []
        self._index: dict[str, int] = {}
        self._hashes: np.ndarray | None = None
        for s in strings:
            self.add(s)

    def add(self, item: str) -> int:
        i = self._index.get(item)
        if i is None:
            i = self._index[item] = len(self._strings)
            self._strings.append(item)
            self._hashes = None
        return i

    def __len__(self) -> int:
        return len(self._strings)

    def __getitem__(self, i: int) -> str:
        return self._strings[i]

    def __contains__(self, item: object) -> bool:
        return item in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings)

    def id(self, item: str) -> int:
        return self._index[item]

    def get(self, item: str, default: int | None = None) -> int | None:
        return self._index.get(item, default)

    @property
    def index(self) -> dict[str, int]:
        return self._index

    @property
    def strings(self) -> list[str]:
        return self._strings

    def hashes(self) -> np.ndarray:
        """An unkeyed 64-bit hash of each item's UTF-8 bytes (uint64, by id).

        Bounding mixes it with the user's keyed seed, so a user's sample depends only on the key,
        the user id and the item strings, never on interning order (which depends on other users).
        """
        if self._hashes is None or len(self._hashes) != len(self._strings):
            self._hashes = item_hashes(self._strings)
        return self._hashes


class ItemSets:
    """Per-user distinct items with the user's own frequency of each, as CSR arrays.

    ``indptr`` (int64, n_users+1), ``items`` (int32 ids, ascending within a row), ``counts``
    (int32, the user's number of occurrences), ``user_ids`` (original ids, row order).
    """

    __slots__ = ("vocab", "user_ids", "indptr", "items", "counts")

    def __init__(self, vocab: Vocabulary, user_ids: list, indptr: np.ndarray, items: np.ndarray,
                 counts: np.ndarray):
        self.vocab = vocab
        self.user_ids = list(user_ids)
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.items = np.ascontiguousarray(items, dtype=np.int32)
        self.counts = np.ascontiguousarray(counts, dtype=np.int32)
        for a in (self.indptr, self.items, self.counts):
            a.setflags(write=False)

    @classmethod
    def from_user_items(cls, pairs: Iterable[tuple[Hashable, Iterable[str]]],
                        vocab: Vocabulary | None = None) -> "ItemSets":
        """Build from ``(user_id, items)`` pairs; a user may appear several times (merged).

        >>> s = ItemSets.from_user_items([("a", ["x", "y", "x"]), ("b", ["y"]), ("a", ["z"])])
        >>> s.to_dict()
        {'a': {'x': 2, 'y': 1, 'z': 1}, 'b': {'y': 1}}
        """
        builder = ItemSetsBuilder(vocab)
        for user, items in pairs:
            builder.add(user, items)
        return builder.build()

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_pairs(self) -> int:
        return int(self.items.size)

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = self.indptr[i], self.indptr[i + 1]
        return self.items[s:e], self.counts[s:e]

    def to_dict(self) -> dict:
        out = {}
        for i, uid in enumerate(self.user_ids):
            items, counts = self.row(i)
            out[uid] = {self.vocab[int(t)]: int(c) for t, c in zip(items, counts)}
        return out

    def restrict_items(self, keep: np.ndarray) -> "ItemSets":
        """The same users holding only items whose id has ``keep[id]`` (bool over the vocab)."""
        mask = keep[self.items]
        rows = np.repeat(np.arange(self.n_users), np.diff(self.indptr))[mask]
        indptr = np.zeros(self.n_users + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=self.n_users), out=indptr[1:])
        return ItemSets(self.vocab, self.user_ids, indptr, self.items[mask], self.counts[mask])

    def without_users(self, user_ids: Iterable[Hashable]) -> "ItemSets":
        """The neighbouring dataset with these users removed (same vocabulary object)."""
        drop = set(user_ids)
        keep = [i for i, u in enumerate(self.user_ids) if u not in drop]
        return self.select_rows(keep)

    def select_rows(self, rows: list[int]) -> "ItemSets":
        rows_arr = np.asarray(rows, dtype=np.int64)
        lengths = np.diff(self.indptr)[rows_arr] if rows_arr.size else np.zeros(0, np.int64)
        indptr = np.zeros(rows_arr.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        take = np.concatenate([np.arange(self.indptr[r], self.indptr[r + 1]) for r in rows_arr]) \
            if rows_arr.size else np.zeros(0, np.int64)
        return ItemSets(self.vocab, [self.user_ids[r] for r in rows], indptr,
                        self.items[take], self.counts[take])

    def __repr__(self) -> str:  # no private statistics in reprs that may end up in logs
        return f"<ItemSets (private data; {len(self.vocab)} interned strings)>"


def _check_user_id(user) -> None:
    if isinstance(user, bool) or not isinstance(user, (str, int, bytes)):
        raise CorpusError(f"user id must be a string or an integer, found a "
                          f"{type(user).__name__}", field="user")


class ItemSetsBuilder:
    """Streaming construction: memory grows with distinct (user, item) pairs, not with text.

    Occurrences are buffered as flat (user, item, count) arrays and merged by sorting whenever
    the buffer exceeds ``compact_every`` pairs.
    """

    def __init__(self, vocab: Vocabulary | None = None, compact_every: int = 8_000_000,
                 max_distinct_per_user: int | None = None):
        self.vocab = vocab if vocab is not None else Vocabulary()
        self._users: dict = {}
        # users over the cap keep the items with the smallest (unkeyed) item hash: a function of
        # their own data only; later items above their hash threshold are dropped on arrival
        self._max_distinct = max_distinct_per_user
        self._cap_threshold: dict[int, int] = {}
        self._u = array("i")
        self._i = array("i")
        self._c = array("i")
        self._merged: tuple[np.ndarray, np.ndarray] | None = None  # (int64 keys, counts)
        self._compact_every = compact_every

    def user_index(self, user) -> int:
        u = self._users.get(user)
        if u is None:
            _check_user_id(user)
            u = self._users[user] = len(self._users)
        return u

    def add(self, user, items: Iterable[str]) -> None:
        self.add_counts(user, Counter(items))

    def add_counts(self, user, counter: dict[str, int]) -> None:
        if not counter:
            self.user_index(user)
            return
        u = self.user_index(user)
        if u in self._cap_threshold:
            limit = self._cap_threshold[u]
            counter = {w: c for w, c in counter.items() if int(item_hashes([w])[0]) <= limit}
            if not counter:
                return
        index = self.vocab.index
        ids = self._i
        for item in counter:
            i = index.get(item)
            if i is None:
                i = self.vocab.add(item)
            ids.append(i)
        self._c.extend(counter.values())
        self._u.extend([u] * len(counter))
        if len(self._u) >= self._compact_every:
            self._compact()

    def _compact(self) -> None:
        if not len(self._u):
            return
        keys = (np.frombuffer(self._u, dtype=np.int32).astype(np.int64) << 32) | \
            np.frombuffer(self._i, dtype=np.int32).astype(np.int64)
        counts = np.frombuffer(self._c, dtype=np.int32).astype(np.int64)
        if self._merged is not None:
            keys = np.concatenate([self._merged[0], keys])
            counts = np.concatenate([self._merged[1], counts])
        self._u, self._i, self._c = array("i"), array("i"), array("i")
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        keys, counts = keys[starts], (np.add.reduceat(counts, starts) if keys.size else counts)
        if self._max_distinct is not None and keys.size:
            keys, counts = self._apply_cap(keys, counts)
        self._merged = (keys, counts)

    def _apply_cap(self, keys: np.ndarray, counts: np.ndarray):
        rows = keys >> 32
        per_user = np.bincount(rows)
        over = np.flatnonzero(per_user > self._max_distinct)
        if not over.size:
            return keys, counts
        hashes = self.vocab.hashes()
        keep = np.ones(keys.size, dtype=bool)
        starts = np.searchsorted(rows, over)
        for u, s in zip(over.tolist(), starts.tolist()):
            e = s + int(per_user[u])
            h = hashes[(keys[s:e] & 0xFFFFFFFF)]
            order = np.argsort(h, kind="stable")
            keep[s:e] = False
            keep[s + order[:self._max_distinct]] = True
            self._cap_threshold[u] = int(h[order[self._max_distinct - 1]])
        return keys[keep], counts[keep]

    def build(self) -> ItemSets:
        self._compact()
        n_users = len(self._users)
        if self._merged is None:
            keys = np.zeros(0, np.int64)
            counts = np.zeros(0, np.int64)
        else:
            keys, counts = self._merged
        rows = (keys >> 32).astype(np.int64)
        items = (keys & 0xFFFFFFFF).astype(np.int32)
        indptr = np.zeros(n_users + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_users), out=indptr[1:])
        counts = np.minimum(counts, np.iinfo(np.int32).max).astype(np.int32)
        user_ids = list(self._users)  # dict preserves insertion order = row index
        return ItemSets(self.vocab, user_ids, indptr, items, counts)
