"""The one place where private text units become integer user data.

Every path feeds the same pieces: documents one at a time (a Python extractor), batches of
polars columns (the columnar extractor), partitions merged after a Dask load, and token runs for
the n-gram mechanisms. The privacy invariants of this stage are written here once:

* user numbering (``UserRows``): a user's row is the order of its first document; the keyed
  order never sees rows, only ``bounding.encode_user_ids`` of the ids (injective, type-tagged);
* interning (``Interner``): strings → dense ids in first-seen order, with their public item
  hashes;
* the distinct cap (``smallest_by_hash``): a user over ``cap`` distinct items keeps its ``cap``
  items of smallest public hash, ties by the string, a function of its own items only. Capping
  partial sums is exact (an item among a user's ``cap`` smallest is among the smallest of every
  part that holds it), so every path may cap early to bound memory and still give the same rows.

The results are plain arrays (``ItemRows``, ``TokenRuns``); ``ItemSets`` and ``TokenCorpus``
wrap them.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bounding.user_order import encode_user_ids
from ..compiled import lazy_module
from ..errors import CorpusError
from . import vocabulary
from .vocabulary import Vocabulary

if TYPE_CHECKING:
    import polars as pl

_kernels = lazy_module("dp_vocab.bounding._kernels")   # numba: imported on first use

# merge the buffered (user, item) pairs once this many are buffered
COMPACT_PAIRS = 8_000_000


def check_user_id(user) -> None:
    if isinstance(user, bool) or not isinstance(user, (str, int, bytes)):
        raise CorpusError(f"user id must be a string or an integer, found a "
                          f"{type(user).__name__}", field="user")


# -- the distinct cap --------------------------------------------------------------------------
def smallest_by_hash(strings, cap: int) -> list[str]:
    """The ``cap`` distinct strings of smallest public item hash, ties by the string: which items
    a user over the cap keeps. ``strings``: a list or a polars String Series; hashed in slices
    with a running threshold, so that only O(cap + slice) strings are held in Python."""
    best: list[tuple[int, str]] = []
    threshold = None
    for start in range(0, len(strings), 65_536):
        part = strings[start:start + 65_536]
        part = part if isinstance(part, list) else part.to_list()
        h = vocabulary.item_hashes(part)
        picked = range(len(part)) if threshold is None else \
            np.flatnonzero(h <= np.uint64(threshold)).tolist()
        best.extend((int(h[i]), part[i]) for i in picked)
        if len(best) > cap:
            best.sort()
            del best[cap:]
            threshold = best[-1][0]
    return [s for _, s in best]


class CappedUser:
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
        for w, h in zip(new, vocabulary.item_hashes(new).tolist()):
            if h <= threshold:
                counts[w] = counter[w]
                hashes[w] = h
        if len(counts) > 2 * self.cap:
            self.prune()

    def prune(self) -> None:
        if len(self.counts) <= self.cap:
            return
        keep = smallest_by_hash(list(self.counts), self.cap)
        self.threshold = self.hashes[keep[-1]]
        self.counts = {w: self.counts[w] for w in keep}
        self.hashes = {w: self.hashes[w] for w in keep}


def user_starts(keys: np.ndarray, n_users: int) -> np.ndarray:
    """Where each user's keys begin in sorted (user << 32 | item) keys (int64, users below
    ``n_users``), and the end: an indptr of n_users + 1 (compiled: one pass)."""
    return _kernels.user_starts(np.ascontiguousarray(keys, dtype=np.int64), int(n_users))


def cap_distinct(keys: np.ndarray, counts: np.ndarray, cap: int | None,
                 names_of) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (user << 32 | item id) keys and counts, each user cut to ``smallest_by_hash`` of
    its items. ``names_of(ids)``: the strings of item ids."""
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
        kept = set(smallest_by_hash(names, cap))
        keep[s:e] = [n in kept for n in names]
    return keys[keep], counts[keep]


def cap_batch(found, user_of: np.ndarray, cap: int):
    """The (doc, item) rows of a polars frame ``found`` without the items a user over the cap
    in this batch can't keep (its ``smallest_by_hash`` of the batch are kept: exact, as capping
    partial sums is), so a hostile user's items never all reach the vocabulary."""
    import polars as pl
    # a user over the cap has more than cap occurrences: only those users are grouped
    occurrences = np.bincount(user_of)
    if not occurrences.size or occurrences.max() <= cap:
        return found, user_of
    busy_users = np.flatnonzero(occurrences > cap)
    rows = np.flatnonzero(occurrences[user_of] > cap)
    rows = rows[np.argsort(user_of[rows], kind="stable")]   # each busy user's rows together
    ends = np.cumsum(occurrences[busy_users])
    keep = None
    for mine in np.split(rows, ends[:-1]):   # one user's rows at a time: memory per user
        held = found["item"].gather(mine)
        distinct = held.unique()
        if len(distinct) <= cap:
            continue
        kept = pl.Series(smallest_by_hash(distinct, cap), dtype=pl.String)
        if keep is None:
            keep = np.ones(len(found), dtype=bool)
        keep[mine] = held.is_in(kept.implode()).to_numpy()
    if keep is None:
        return found, user_of
    return found.filter(pl.Series(keep)), user_of[keep]


# -- users and strings -------------------------------------------------------------------------
class UserRows:
    """User ids → rows in order of first document. One user at a time (``row``: final rows at
    once), or batches of ids (``rows``: a polars Series or a list; each batch's distinct ids are
    numbered after the previous batches', and :meth:`finish` gives every user the row of its
    first document). A String or Int64 column is numbered in polars, with no Python object per
    id."""

    def __init__(self):
        self._parts: list = []   # each batch's distinct ids, in order of first document
        self._n = 0
        self._index: dict = {}   # ``row``'s users

    def row(self, user) -> int:
        u = self._index.get(user)
        if u is None:
            check_user_id(user)
            u = self._index[user] = len(self._index)
        return u

    def rows(self, users) -> np.ndarray:
        """The provisional row of each document's user (int64)."""
        import polars as pl
        if isinstance(users, pl.Series) and users.dtype in (pl.String, pl.Int64) \
                and not users.null_count():   # ids of valid kinds only: no check per id
            uniq = users.unique(maintain_order=True)
            if len(uniq) == len(users):   # one document per user: uniq is users
                local = np.arange(len(users), dtype=np.int64)
            else:
                numbers = pl.Series(np.arange(len(uniq), dtype=np.int64))
                local = users.replace_strict(uniq, numbers, return_dtype=pl.Int64).to_numpy()
            return self._add(uniq, local)
        ids = users.to_list() if isinstance(users, pl.Series) else users
        index: dict = {}
        for u in ids:
            if u not in index:
                check_user_id(u)
                index[u] = len(index)
        local = np.fromiter((index[u] for u in ids), dtype=np.int64, count=len(ids))
        return self._add(list(index), local)

    def _add(self, distinct, local: np.ndarray) -> np.ndarray:
        rows = local + self._n
        self._parts.append(distinct)
        self._n += len(distinct)
        return rows

    def __len__(self) -> int:
        return len(self._index) if self._index else self._n

    def finish(self) -> tuple[Any, np.ndarray | None]:
        """(the user ids by row: a list, or a polars column when they came as one kind of
        column; the row of each provisional row, or None when those are the same: no user in
        two batches)."""
        import polars as pl
        if self._index:
            return list(self._index), None
        parts = self._parts
        if parts and all(isinstance(p, pl.Series) and p.dtype == parts[0].dtype
                         for p in parts):
            ids = pl.concat(parts, rechunk=True)
            lut = None
            if ids.n_unique() != len(ids):
                first = pl.DataFrame({"u": ids}).with_row_index("p").select(
                    pl.col("p").min().over("u")).to_series()
                lut = (first.rank("dense") - 1).cast(pl.Int64).to_numpy()
                ids = ids.unique(maintain_order=True)
            return ids, lut   # a column: ItemSets lists it only if it is read
        index: dict = {}
        add = index.setdefault
        lut = np.array([add(u, len(index)) for p in parts
                        for u in (p.to_list() if isinstance(p, pl.Series) else p)],
                       dtype=np.int64)
        return list(index), (None if lut.size == len(index) else lut)


class Interner:
    """Strings → dense ids in first-seen order, one at a time (``id``), from a list (``ids``)
    or from a polars column (``column_ids``). With ``hashes``, new strings are hashed as they
    come (the item hashes bounding needs): while the reader works on the next batch, not after
    the last."""

    def __init__(self, hashes: bool = False):
        self.strings: list[str] = []   # by id
        self._index: dict[str, int] = {}   # string → id of strings[:len(_index)]
        self._hashes: list[np.ndarray] | None = [] if hashes else None
        # column_ids: an empty column of this interner's own polars categories (they live
        # while a column of them does); its dtype is what every column is cast to
        self._categorical: pl.Series | None = None
        self._id_of_code = np.zeros(0, dtype=np.int64)   # their code → our id (−1: not yet)

    def id(self, string: str) -> int:
        """The id of one string (no hashing: a later ``vocabulary()`` hashes the rest)."""
        index = self._index
        i = index.get(string)
        if i is None:
            i = index[string] = len(self.strings)
            self.strings.append(string)
        return i

    def ids(self, strings: list[str], hashes: np.ndarray | None = None) -> np.ndarray:
        """The ids of ``strings``; ``hashes``: their item hashes, when already known."""
        index = self._index
        n = len(self.strings)
        if len(index) < n:   # strings that column_ids added without the index
            index.update(zip(self.strings[len(index):], range(len(index), n)))
        add = index.setdefault
        ids = np.array([add(s, len(index)) for s in strings], dtype=np.int64)
        if len(index) > n:
            new = np.flatnonzero(ids >= n)
            new = new[np.unique(ids[new], return_index=True)[1]]   # first of each, by id
            self._add_new([strings[i] for i in new.tolist()],
                          None if hashes is None else hashes[new])
        return ids

    def _add_new(self, strings: list[str], hashes: np.ndarray | None = None,
                 column=None) -> None:
        """Appends strings not seen before (distinct) as the next ids; ``column``: the same
        strings as a polars column (encoded for hashing there)."""
        self.strings.extend(strings)
        if self._hashes is not None:
            if hashes is None:
                encoded = None if column is None else encode_user_ids(column)
                hashes = vocabulary.item_hashes(strings, encoded)
            self._hashes.append(hashes)

    def column_ids(self, column) -> np.ndarray:
        """The id of every string of a polars String Series (int64 array). The column is cast
        to this interner's categories (on every core), whose codes stay the same from one
        column to the next; only strings with a code not seen before (in order of first
        occurrence) reach Python: each string once per interner, not once per batch."""
        import polars as pl
        if not len(column):
            return np.zeros(0, dtype=np.int64)
        if self._categorical is None:
            self._categorical = pl.Series([], dtype=pl.Categorical(pl.Categories.random()))
        codes_col = column.cast(self._categorical.dtype).to_physical()
        codes = codes_col.to_numpy()
        top = int(codes.max()) + 1
        if top > self._id_of_code.size:
            grown = np.full(max(top, 2 * self._id_of_code.size), -1, dtype=np.int64)
            grown[:self._id_of_code.size] = self._id_of_code
            self._id_of_code = grown
        first = np.sort(codes_col.arg_unique().to_numpy())   # first occurrences, in order
        new = first[self._id_of_code[codes[first]] < 0]
        if new.size and self._index:   # ids() has numbered strings: it knows which are new
            self._id_of_code[codes[new]] = self.ids(column.gather(new).to_list())
        elif new.size:   # codes not seen before: distinct strings, new to this interner
            self._id_of_code[codes[new]] = np.arange(len(self.strings),
                                                     len(self.strings) + new.size)
            strings = column.gather(new)
            self._add_new(strings.to_list(), column=strings)
        return self._id_of_code[codes]

    def vocabulary(self) -> Vocabulary:
        hashes = None
        if self._hashes is not None:
            hashes = np.concatenate(self._hashes) if self._hashes else np.zeros(0, np.uint64)
        return Vocabulary.from_strings(self.strings, hashes)


# -- item rows ---------------------------------------------------------------------------------
@dataclass
class ItemRows:
    """Per-user distinct items as CSR arrays: what ``ItemSets`` wraps."""
    vocab: Vocabulary
    user_ids: Any                    # a list, or a polars column
    indptr: np.ndarray
    items: np.ndarray
    counts: np.ndarray
    encoded_user_ids: tuple | None   # encode_user_ids(user_ids), when built from a column


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and how often each occurs (polars' sort: every core)."""
    import polars as pl
    if not keys.size:
        return keys, np.zeros(0, np.int64)
    keys = pl.Series(keys).sort().to_numpy()
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.diff(np.r_[starts, keys.size])


class ItemRowsBuilder:
    """(user, item occurrences) → ``ItemRows``, from documents (``add``, ``add_counts``),
    columnar batches (``add_batch``) or built partitions (``add_part``), one kind per builder.

    Occurrences are buffered as sorted (user row << 32 | item id, count) parts and merged by
    sorting once the buffer outgrows what is merged (amortised: linear in total), so memory
    grows with distinct (user, item) pairs, not with text. With ``cap``, each user keeps its
    ``smallest_by_hash`` items, and memory per user stays bounded while its documents arrive: a
    user whose items may exceed the cap goes to a ``CappedUser`` instead of the buffers.
    """

    _CHUNK = 1 << 16  # occurrences counted at a time, so one huge document stays bounded too

    def __init__(self, cap: int | None = None, compact_every: int | None = None):
        self.cap = cap
        self.users = UserRows()
        self.items = Interner(hashes=True)
        self._compact_every = COMPACT_PAIRS if compact_every is None else compact_every
        self._keys: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._buffered = self._merged_size = 0
        # documents: occurrences appended here, then sorted into a part
        self._u, self._i, self._c = array("q"), array("q"), array("q")
        self._bound = array("q")   # per user: an upper bound of its distinct buffered items
        self._capped: dict[int, CappedUser] = {}

    # documents, one at a time
    def add(self, user, items: Iterable[str]) -> None:
        """Add one document's item occurrences (any iterable, consumed in bounded chunks)."""
        u = self._row(user)
        if self.cap is None or (isinstance(items, list) and len(items) <= self._CHUNK):
            self._add_counter(u, Counter(items))  # the common case: one small document
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
            if self._bound[u] + len(counter) > self.cap:
                self._capped[u] = CappedUser(self.cap)
                self._capped[u].add(counter)
                counter = Counter()
        if counter:
            self._append(u, counter)

    def add_counts(self, user, counter: dict[str, int]) -> None:
        """Add one document's ``{item: occurrences}``."""
        self._add_counter(self._row(user), counter)

    def _row(self, user) -> int:
        u = self.users.row(user)
        if u == len(self._bound):
            self._bound.append(0)
        return u

    def _add_counter(self, u: int, counter: dict[str, int]) -> None:
        if not counter:
            return
        if self.cap is not None:
            state = self._capped.get(u)
            if state is None and self._bound[u] + len(counter) > self.cap:
                state = self._capped[u] = CappedUser(self.cap)
            if state is not None:
                state.add(counter)
                return
        self._append(u, counter)

    def _append(self, u: int, counter: dict[str, int]) -> None:
        intern = self.items.id
        self._i.extend([intern(item) for item in counter])
        self._c.extend(counter.values())
        self._u.extend([u] * len(counter))
        self._bound[u] += len(counter)
        if len(self._u) >= self._compact_every:
            self._flush_documents()

    def _flush_documents(self) -> None:
        if not len(self._u):
            return
        keys = (np.frombuffer(self._u, dtype=np.int64) << 32) | \
            np.frombuffer(self._i, dtype=np.int64)
        counts = np.frombuffer(self._c, dtype=np.int64)
        self._u, self._i, self._c = array("q"), array("q"), array("q")
        order = np.argsort(keys, kind="stable")
        self._keys.append(keys[order])
        self._counts.append(counts[order].copy())
        self._merge()
        if self.cap is not None and self._keys:
            # exact distinct counts again: the bounds only grow between merges
            self._bound = array("q", np.bincount(self._keys[0] >> 32,
                                                 minlength=len(self.users)).tolist())

    # columnar batches
    def add_batch(self, user_of: np.ndarray, found, last: bool) -> None:
        """A slice of a batch: ``user_of`` (the provisional row of each of ``found``'s
        (doc, item) rows, from ``users.rows``); ``last``: the batch's last slice (merging
        waits for it, so that a batch's parts are merged together)."""
        if self.cap is not None:
            found, user_of = cap_batch(found, user_of, self.cap)
        item_of = self.items.column_ids(found["item"])
        del found
        key, count = _distinct((user_of << 32) | item_of)
        self._keys.append(key)
        self._counts.append(count.astype(np.int64))
        self._buffered += key.size
        if last and self._buffered >= max(self._compact_every, 2 * self._merged_size):
            self._merge()

    # partitions built elsewhere (a Dask load)
    def add_part(self, user_ids, strings, hashes, indptr, part_items, part_counts) -> None:
        """A built partition: its user ids (a list or a polars column), item strings and their
        hashes, and CSR arrays; a user may be in several partitions: its counts are added."""
        ids = self.items.ids(list(strings), hashes)
        rows = self.users.rows(user_ids)
        key = (np.repeat(rows, np.diff(indptr)) << 32) | ids[part_items]
        order = np.argsort(key, kind="stable")
        self._keys.append(key[order])
        self._counts.append(np.asarray(part_counts, dtype=np.int64)[order])

    def _merge(self) -> None:
        """The buffered parts → one sorted part with summed counts, each user capped.
        Parts that follow one another (each user's documents in one batch) are merged
        already and skip the sort."""
        keys, counts = self._keys, self._counts
        if not keys:
            return
        key, count = np.concatenate(keys), np.concatenate(counts)
        keys.clear()   # consumed: the parts are freed before the sort (peak memory)
        counts.clear()
        if not (key[1:] > key[:-1]).all():
            import polars as pl   # sorts (key, count) rows on every core
            merged = pl.DataFrame({"key": key, "count": count}).sort("key")
            key, count = merged["key"].to_numpy(), merged["count"].to_numpy()
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            key, count = key[starts], np.add.reduceat(count, starts)
        strings = self.items.strings
        key, count = cap_distinct(key, count, self.cap, lambda ids: [strings[i] for i in ids])
        keys.append(key)
        counts.append(count)
        self._buffered = self._merged_size = key.size

    def build(self) -> ItemRows:
        # capped users' bounded items join the others; the final cut (pre-cap items included)
        # happens in the last merge
        capped, self._capped = self._capped, {}
        for u, state in capped.items():
            state.prune()
            self._append(u, state.counts)
        self._flush_documents()
        user_ids, final = self.users.finish()
        # the users' order-key input, from the column (a release needs no list of the ids)
        encoded = None if isinstance(user_ids, list) else encode_user_ids(user_ids)
        if final is not None:   # a user in several batches: its rows become one
            for k in self._keys:
                k[:] = (final[k >> 32] << 32) | (k & 0xFFFFFFFF)
        self._merge()
        if self._keys:
            key, count = self._keys.pop(), self._counts.pop()
        else:
            key, count = np.zeros(0, np.int64), np.zeros(0, np.int64)
        vocab = self.items.vocabulary()
        item_ids = key.astype(np.int32)   # the low 32 bits: the item id (< 2³¹)
        held = np.zeros(len(vocab), dtype=bool)
        held[item_ids] = True
        if not held.all():   # the cap dropped every holder of some items: renumber the rest
            new = np.cumsum(held) - 1
            kept = [s for s, h in zip(vocab.strings, held.tolist()) if h]
            vocab = Vocabulary.from_strings(kept, vocab.hashes()[held])
            item_ids = new[item_ids]
            order = np.lexsort((item_ids, key >> 32))
            key, count, item_ids = key[order], count[order], item_ids[order]
        indptr = user_starts(key, len(user_ids))
        np.minimum(count, np.iinfo(np.int32).max, out=count)
        return ItemRows(vocab, user_ids, indptr, item_ids, count, encoded)


# -- token runs --------------------------------------------------------------------------------
@dataclass
class TokenRuns:
    """Token-id sequences by user: what ``TokenCorpus`` wraps."""
    vocab: Vocabulary
    user_ids: list
    tokens: np.ndarray
    seq_ptr: np.ndarray
    seq_user: np.ndarray


class TokenRunsBuilder:
    """(user, token runs) → ``TokenRuns``, from documents (``add_runs``), columnar batches
    (``add_batch``) or built partitions (``add_part``)."""

    def __init__(self):
        self.users = UserRows()
        self.tokens = Interner()
        self._toks: list[np.ndarray] = []
        self._lens: list[np.ndarray] = []
        self._seq_users: list[np.ndarray] = []
        self._t, self._l, self._s = array("q"), array("q"), array("q")

    def add_runs(self, user, runs: Iterable[Iterable[str]]) -> None:
        u = self.users.row(user)
        intern = self.tokens.id
        for run in runs:
            before = len(self._t)
            self._t.extend([intern(t) for t in run])
            self._l.append(len(self._t) - before)
            self._s.append(u)

    def add_batch(self, rows: np.ndarray, runs) -> None:
        """A batch's runs (a polars frame of tok, seg, doc), ``rows``: each document's
        provisional user row (from ``users.rows``)."""
        self._toks.append(self.tokens.column_ids(runs["tok"]))
        seg, doc = runs["seg"].to_numpy(), runs["doc"].to_numpy()
        starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]]) if seg.size else \
            np.zeros(0, np.int64)
        self._lens.append(np.diff(np.r_[starts, seg.size]))
        self._seq_users.append(rows[doc[starts]])

    def add_part(self, user_ids, strings, part_tokens, seq_ptr, seq_user) -> None:
        ids = self.tokens.ids(list(strings))
        rows = self.users.rows(list(user_ids))
        self._toks.append(ids[part_tokens])
        self._lens.append(np.diff(seq_ptr))
        self._seq_users.append(rows[seq_user])

    def build(self) -> TokenRuns:
        if len(self._l):
            self._toks.append(np.frombuffer(self._t, dtype=np.int64))
            self._lens.append(np.frombuffer(self._l, dtype=np.int64))
            self._seq_users.append(np.frombuffer(self._s, dtype=np.int64))
        user_ids, final = self.users.finish()
        if not isinstance(user_ids, list):
            user_ids = user_ids.to_list()
        lengths = np.concatenate(self._lens) if self._lens else np.zeros(0, np.int64)
        ptr = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        seq_user = np.concatenate(self._seq_users) if self._seq_users else np.zeros(0, np.int64)
        if final is not None:
            seq_user = final[seq_user]
        tokens = np.concatenate(self._toks) if self._toks else np.zeros(0, np.int64)
        return TokenRuns(self.tokens.vocabulary(), user_ids, tokens, ptr, seq_user)
