"""Interned item ids and per-user item sets in CSR form.

``ItemSets`` is the hand-over point between text processing and mechanisms: after it, everything
works on integer arrays. It holds private data (true per-user items and counts) and is never
written to an output.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator
from itertools import islice

import numpy as np

from ..bounding import (Bounding, BoundedRows, ItemWeights, NamesOf, NgramLevels, Weighting, bound,
                       fingerprints, normalised_contributions, string_ties, user_keys,
                       user_weights)
from ..compiled import lazy_module
from ..errors import CorpusError, ParameterError

_kernels = lazy_module("dp_vocab.bounding._kernels")   # numba: imported on first use


# Items are told apart by this hash in bounding, candidate order and public-list lookups; a new
# hash function needs a new name (cached public lists are keyed by it).
ITEM_HASH = "siphash-2-4 of the tagged UTF-8 bytes, public key v1"
_ITEM_KEY = b"dp-vocab: the public item hash, v1"


def item_hashes(strings, encoded: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The unkeyed 64-bit hash of each item (SipHash-2-4 under a fixed, public key of its
    UTF-8 bytes), as uint64: compiled, a few nanoseconds an item. ``encoded``:
    ``bounding.encode_user_ids(strings)``, when the caller has it already."""
    strings = strings if isinstance(strings, list) else list(strings)
    return fingerprints(strings, _ITEM_KEY, encoded)


class Vocabulary:
    """A bijection between item strings and dense ids 0..n-1, in first-seen order."""

    __slots__ = ("_strings", "_index", "_hashes", "_ties")

    def __init__(self, strings: Iterable[str] = ()):
        self._strings: list[str] = []
        self._index: dict[str, int] | None = {}
        self._hashes: np.ndarray | None = None
        self._ties: np.ndarray | None = None
        for s in strings:
            self.add(s)

    @classmethod
    def from_index(cls, index: dict[str, int], hashes: np.ndarray | None = None) -> "Vocabulary":
        """Adopt ``{string: id}`` with ids 0..n-1 in insertion order (no copy), and the
        strings' :func:`item_hashes` when they are known already."""
        vocab = cls.from_strings(list(index), hashes)
        vocab._index = index
        return vocab

    @classmethod
    def from_strings(cls, strings: list[str], hashes: np.ndarray | None = None) -> "Vocabulary":
        """Adopt distinct ``strings`` as ids 0..n-1 (no copy), and their :func:`item_hashes`
        when known. The string → id index is built on the first lookup: a run that only
        reads ids' strings (extraction, then a release) never builds it."""
        vocab = cls()
        vocab._strings = strings
        vocab._index = None
        vocab._hashes = hashes
        return vocab

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = dict(zip(self._strings, range(len(self._strings))))
        return self._index

    def add(self, item: str) -> int:
        index = self.index
        i = index.get(item)
        if i is None:
            i = index[item] = len(self._strings)
            self._strings.append(item)
            self._hashes = self._ties = None
        return i

    def __len__(self) -> int:
        return len(self._strings)

    def __getitem__(self, i: int) -> str:
        return self._strings[i]

    def __contains__(self, item: object) -> bool:
        return item in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings)

    def id(self, item: str) -> int:
        return self.index[item]

    def get(self, item: str, default: int | None = None) -> int | None:
        return self.index.get(item, default)

    @property
    def strings(self) -> list[str]:
        return self._strings

    def strings_at(self, ids: np.ndarray) -> list[str]:
        """The strings of item ids ``ids`` (int array), in that order."""
        strings = self._strings
        return [strings[i] for i in np.asarray(ids).tolist()]

    def hashes(self) -> np.ndarray:
        """An unkeyed 64-bit hash of each item's UTF-8 bytes (uint64, by id).

        Bounding mixes it with the user's keyed seed, so a user's sample depends only on the key,
        the user id and the item strings, never on interning order (which depends on other users).
        """
        if self._hashes is None or len(self._hashes) != len(self._strings):
            self._hashes = item_hashes(self._strings)
        return self._hashes

    def ties(self) -> np.ndarray:
        """Tie-breaks for items sharing a hash (``bounding.string_ties``), cached."""
        if self._ties is None:
            self._ties = string_ties(self._strings, self.hashes())
        return self._ties


class ItemSets:
    """Per-user distinct items with the user's own frequency of each, as CSR arrays.

    ``indptr`` (int64, n_users+1), ``items`` (int32 ids, ascending within a row), ``counts``
    (int32, the user's number of occurrences), ``user_ids`` (original ids, row order).
    """

    __slots__ = ("vocab", "_user_ids", "indptr", "items", "counts", "_encoded_user_ids")

    def __init__(self, vocab: Vocabulary, user_ids, indptr: np.ndarray, items: np.ndarray,
                 counts: np.ndarray, *, encoded_user_ids: tuple | None = None):
        """``user_ids``: a sequence, or a polars Series (from extraction) made a list when
        first read: a release needs only their encoding."""
        self.vocab = vocab
        self._user_ids = user_ids if type(user_ids).__module__.startswith("polars") \
            else list(user_ids)
        # bounding.encode_user_ids(user_ids), when the builder has it (extraction: from polars)
        self._encoded_user_ids = encoded_user_ids
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
        for k, (user, items) in enumerate(pairs):
            builder.add(user, _checked_items(items, k))
        return builder.build()

    @property
    def user_ids(self) -> list:
        """The users' original ids, by row."""
        ids = self._user_ids
        if not isinstance(ids, list):
            ids = self._user_ids = ids.to_list()
        return ids

    @property
    def n_users(self) -> int:
        return len(self._user_ids)

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
        return ItemSets(self.vocab, self._user_ids, indptr, self.items[mask], self.counts[mask],
                        encoded_user_ids=self._encoded_user_ids)

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

    # -- what mechanisms ask of user data (the ``bounding.UserData`` protocol) ------------------
    def bounded_rows(self, key: bytes, bounding: Bounding) -> BoundedRows:
        hashes = self.vocab.hashes()
        encoded = self._encoded_user_ids   # with it, the ids are only counted (not listed)
        words, seeds = user_keys(self.user_ids if encoded is None else self._user_ids, key,
                                 encoded)
        b = bound(self.indptr, self.items, self.counts, self.vocab.strings,
                  hashes, self.vocab.ties(), (words, seeds), bounding)
        return BoundedRows(b, hashes, self.vocab.strings_at, words)

    def weight_sums(self, key: bytes, bounding: Bounding, weighting: Weighting,
                    exclude: frozenset[str] = frozenset()) -> ItemWeights:
        data = self
        if exclude:
            keep = np.ones(len(self.vocab), dtype=bool)
            gone = [self.vocab.get(w) for w in exclude]
            keep[[i for i in gone if i is not None]] = False
            data = self.restrict_items(keep)
        w = user_weights(data.bounded_rows(key, bounding).bounded, len(self.vocab), weighting)
        cand = np.flatnonzero(w > 0)
        return ItemWeights(NamesOf(self.vocab.strings_at, cand), self.vocab.hashes()[cand],
                           w[cand])

    def holder_counts(self, items) -> np.ndarray:
        ids = np.array([self.vocab.get(w, -1) for w in items], dtype=np.int64)
        held = np.bincount(self.items, minlength=len(self.vocab) + 1).astype(np.float64)
        return held[ids]   # id −1 (not held here) reads the spare last cell: 0

    def clipped_count_sums(self, items, key: bytes, bounding: Bounding,
                           max_count: int, l2_scale: int | None = None) -> np.ndarray:
        ids = np.array([self.vocab.get(w, -1) for w in items], dtype=np.int64)
        keep = np.zeros(len(self.vocab) + 1, dtype=bool)   # + a spare last cell for id −1
        keep[ids] = True
        b = self.restrict_items(keep[:-1]).bounded_rows(key, bounding).bounded
        contrib = np.minimum(b.counts, max_count).astype(np.float64)
        if l2_scale is not None:
            contrib = normalised_contributions(contrib, b.indptr, l2_scale)
        # float sums of integers are exact (< 2⁵³); the spare cell (items not held here) is 0
        sums = np.bincount(b.items, weights=contrib, minlength=len(self.vocab) + 1)
        return np.rint(sums[ids]).astype(np.int64)

    def ngram_levels(self, bounding: Bounding) -> NgramLevels:
        raise needs_sequences()

    def __repr__(self) -> str:  # no private statistics in reprs that may end up in logs
        return "<ItemSets (private data)>"


def needs_sequences() -> ParameterError:
    """The error for a level-wise n-gram mechanism given item sets."""
    return ParameterError("mechanism input", "item sets",
                          "token sequences (a level-wise n-gram mechanism reads each document "
                          "as runs of tokens)", "Run it through a recipe, or build its input "
                          "with dp_vocab.extract_sequences().")


def needs_item_sets() -> ParameterError:
    """The error for an item-set mechanism given token sequences."""
    return ParameterError("mechanism input", "token sequences",
                          "item sets (this mechanism counts each user's distinct items)",
                          "Run it through a recipe, or build its input with "
                          "dp_vocab.extract_itemsets().")


def _checked_items(items, k: int) -> list[str]:
    """The items of pair ``k`` of ``from_user_items`` as a list of strings, or a CorpusError
    that says what was found by its type only (never a value: they are private)."""
    if isinstance(items, (str, bytes)):
        raise CorpusError(f"pair {k}: expected an iterable of item strings (e.g. a list of "
                          f"tokens), found a {type(items).__name__}, which would be read as its "
                          f"characters. Split the text first (e.g. text.split()) or use an "
                          f"extractor (dp_vocab.itemsets_from_frame)", field="items")
    items = list(items)
    for item in items:
        if not isinstance(item, str):
            kind = type(item).__name__
            raise CorpusError(f"pair {k}: expected item strings, found "
                              f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}. Convert the "
                              f"items to str first",
                              field="items")
    return items


def _check_user_id(user) -> None:
    if isinstance(user, bool) or not isinstance(user, (str, int, bytes)):
        raise CorpusError(f"user id must be a string or an integer, found a "
                          f"{type(user).__name__}", field="user")


class _CappedUser:
    """The distinct items of one user over the cap, kept bounded while they arrive: only items
    whose hash is at most ``threshold`` are held, and when more than ``2 * cap`` are held the
    threshold drops to the ``cap``-th smallest hash. An item among the user's ``cap``
    smallest-hash items is never dropped, so the final cut is the same as keeping everything."""

    __slots__ = ("cap", "threshold", "counts", "hashes")

    def __init__(self, cap: int):
        self.cap = cap
        self.threshold = 2 ** 64
        self.counts: dict[str, int] = {}
        self.hashes: dict[str, int] = {}

    def add(self, counter: dict[str, int]) -> None:
        counts, hashes, threshold = self.counts, self.hashes, self.threshold
        new = []
        for w, c in counter.items():
            if w in counts:
                counts[w] += c
            else:
                new.append(w)
        for w, h in zip(new, item_hashes(new).tolist()):
            if h <= threshold:
                counts[w] = counter[w]
                hashes[w] = h
        if len(counts) > 2 * self.cap:
            self.prune()

    def prune(self) -> None:
        if len(self.counts) <= self.cap:
            return
        keep = sorted(self.counts, key=lambda w: (self.hashes[w], w))[:self.cap]  # ties: string
        self.threshold = self.hashes[keep[-1]]
        self.counts = {w: self.counts[w] for w in keep}
        self.hashes = {w: self.hashes[w] for w in keep}


def user_starts(keys: np.ndarray, n_users: int) -> np.ndarray:
    """Where each user's keys begin in sorted (user << 32 | item) keys (int64, users below
    ``n_users``), and the end: an indptr of n_users + 1 (compiled: one pass)."""
    return _kernels.user_starts(np.ascontiguousarray(keys, dtype=np.int64), int(n_users))


def cap_distinct(keys: np.ndarray, counts: np.ndarray, cap: int | None,
                 names_of) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (user << 32 | item id) keys and counts, each user cut to its ``cap`` items of
    smallest hash, ties by the item string (never by interning order, which depends on other
    users). ``names_of(ids)``: the strings of item ids."""
    if cap is None or not keys.size:
        return keys, counts
    starts = user_starts(keys, int(keys[-1] >> 32) + 1)
    per_user = np.diff(starts)
    over = np.flatnonzero(per_user > cap)
    if not over.size:
        return keys, counts
    keep = np.ones(keys.size, dtype=bool)
    for u, s in zip(over.tolist(), starts[over].tolist()):
        e = s + int(per_user[u])
        names = names_of((keys[s:e] & 0xFFFFFFFF).tolist())
        h = item_hashes(names).tolist()
        ranked = sorted(range(e - s), key=lambda j: (h[j], names[j]))
        keep[s:e] = False
        keep[[s + j for j in ranked[:cap]]] = True
    return keys[keep], counts[keep]


class ItemSetsBuilder:
    """Streaming construction: memory grows with distinct (user, item) pairs, not with text.

    Occurrences are buffered as flat (user, item, count) arrays and merged by sorting whenever
    the buffer exceeds ``compact_every`` pairs. With ``max_distinct_per_user``, a user keeps
    only its ``max_distinct_per_user`` items of smallest (unkeyed) item hash — a function of its
    own data only — and memory stays bounded while its documents arrive: once a user may hold
    more than the cap (its buffered pairs exceed it), its items go to a bounded per-user
    structure (:class:`_CappedUser`) instead of the vocabulary and buffers.
    """

    _CHUNK = 1 << 16  # occurrences counted at a time, so one huge document stays bounded too

    def __init__(self, vocab: Vocabulary | None = None, compact_every: int = 8_000_000,
                 max_distinct_per_user: int | None = None):
        self.vocab = vocab if vocab is not None else Vocabulary()
        self._users: dict = {}
        self._max_distinct = max_distinct_per_user
        self._bound = array("q")  # per user: an upper bound of its distinct buffered items
        self._capped: dict[int, _CappedUser] = {}
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
            self._bound.append(0)
        return u

    def add(self, user, items: Iterable[str]) -> None:
        """Add one document's item occurrences (any iterable, consumed in bounded chunks)."""
        u = self.user_index(user)
        if self._max_distinct is None or (isinstance(items, list) and len(items) <= self._CHUNK):
            self.add_counts(user, Counter(items))  # the common case: one small document
            return
        it = iter(items)
        counter: Counter = Counter()
        while True:
            chunk = list(islice(it, self._CHUNK))
            if not chunk:
                break
            state = self._capped.get(u)
            if state is not None:
                state.add(Counter(chunk))
                continue
            counter.update(chunk)
            if self._bound[u] + len(counter) > self._max_distinct:
                self._capped[u] = _CappedUser(self._max_distinct)
                self._capped[u].add(counter)
                counter = Counter()
        if counter:
            self._append(u, counter)

    def add_counts(self, user, counter: dict[str, int]) -> None:
        """Add one document's ``{item: occurrences}``."""
        u = self.user_index(user)
        if not counter:
            return
        if self._max_distinct is not None:
            state = self._capped.get(u)
            if state is None and self._bound[u] + len(counter) > self._max_distinct:
                state = self._capped[u] = _CappedUser(self._max_distinct)
            if state is not None:
                state.add(counter)
                return
        self._append(u, counter)

    def _append(self, u: int, counter: dict[str, int]) -> None:
        index = self.vocab.index
        ids = self._i
        for item in counter:
            i = index.get(item)
            if i is None:
                i = self.vocab.add(item)
            ids.append(i)
        self._c.extend(counter.values())
        self._u.extend([u] * len(counter))
        self._bound[u] += len(counter)
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
            # exact distinct counts again: the bounds only grow between compactions
            self._bound = array("q", np.bincount(keys >> 32,
                                                 minlength=len(self._users)).tolist())
        self._merged = (keys, counts)

    def _apply_cap(self, keys: np.ndarray, counts: np.ndarray):
        return cap_distinct(keys, counts, self._max_distinct, self.vocab.strings_at)

    def build(self) -> ItemSets:
        # capped users' bounded items join the others; the final cut (pre-cap items included)
        # happens in _compact
        capped, self._capped = self._capped, {}
        for u, state in capped.items():
            state.prune()
            self._append(u, state.counts)
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
