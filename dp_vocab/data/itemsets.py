"""Interned item ids and per-user item sets in CSR form.

``ItemSets`` is the hand-over point between text processing and mechanisms: after it, everything
works on integer arrays. It holds private data (true per-user items and counts) and is never
written to an output.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np

from ..bounding import (Bounding, BoundedRows, ItemSetData, ItemWeights, NamesOf, Weighting, bound_sets,
                       fingerprints, normalised_contributions, string_ties, user_keys,
                       user_weights)
from ..errors import CorpusError
from .builder import ItemRows, ItemRowsBuilder
from .vocabulary import ITEM_HASH, Vocabulary, item_hashes  # noqa: F401 - the data's API


class ItemSets(ItemSetData):
    """Per-user distinct items with the user's own frequency of each, as CSR arrays, in this
    process's memory: the local backend's item sets (``bounding.ItemSetData``; a Dask
    partition is one too).

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
    def from_user_items(cls, pairs: Iterable[tuple[Hashable, Iterable[str]]]) -> "ItemSets":
        """Build from ``(user_id, items)`` pairs; a user may appear several times (merged).

        Examples
        --------
        >>> s = ItemSets.from_user_items([("a", ["x", "y", "x"]), ("b", ["y"]), ("a", ["z"])])
        >>> s.to_dict()
        {'a': {'x': 2, 'y': 1, 'z': 1}, 'b': {'y': 1}}
        """
        builder = ItemRowsBuilder()
        for k, (user, items) in enumerate(pairs):
            builder.add(user, _checked_items(items, k))
        return cls.from_rows(builder.build())

    @classmethod
    def from_rows(cls, rows: ItemRows) -> "ItemSets":
        """Wrap what the builder made (``data.builder``)."""
        return cls(rows.vocab, rows.user_ids, rows.indptr, rows.items, rows.counts,
                   encoded_user_ids=rows.encoded_user_ids)

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
        b = bound_sets(self.indptr, self.items, self.counts, self.vocab.strings,
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

    def __repr__(self) -> str:  # no private statistics in reprs that may end up in logs
        return "<ItemSets (private data)>"


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
