"""The Dask backend: user data lives on the cluster as one ``ItemSets`` (or ``TokenCorpus``)
per worker thread, held as futures, and every question a mechanism asks (``bounding.UserData``)
is answered by asking each partition the same question, with the same code as locally, and
combining the answers as numbers: sums are added by item identity, bounded rows are merged in
keyed order (order words and item identities only; the strings of the candidates alone are
fetched afterwards, each from one partition). One implementation of the privacy core, two
engines: for a fixed key the histograms equal the local ones (integer sums bit for bit,
fractional sums up to summation order).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..bounding.user_order import encode_user_ids
from ..bounding import (BoundedSets, BoundedRows, Bounding, ItemSetData, ItemWeights, SequenceData,
                        fingerprints, keyed_order, user_keys)
from ..ingest.corpora.readers import MIXED_ID_MESSAGE, MixedUserIdWarning
from ..errors import ParameterError
from ..data.itemsets import ItemSets, Vocabulary
from ..data.token_corpus import Gram, LevelGrams, TokenCorpus
from .base import Backend, register_backend
from .settings import TLS_KEYS

# Fixed, public SipHash keys (``fingerprints``), where nothing is secret
# (which partition holds a user; a second item hash so that items are told apart by 128 bits)
_PART_KEY = b"dp-vocab dask: user to partition"
_ID_KEY = b"dp-vocab dask: second item hash."


class _Whole:
    """A value sent between processes as one pickle: ``distributed`` serializes lists, tuples
    and dicts element by element, which is slow for a list of many strings.
    ``id_kinds``: the kinds of user id (int, str) a loaded file or share held; ``skipped``:
    how many of its lines ``on_error = "skip"`` skipped, and the first reasons (file, line
    and field, as locally)."""

    __slots__ = ("value", "id_kinds", "skipped")

    def __init__(self, value, id_kinds: frozenset = frozenset(), skipped: tuple = (0, ())):
        self.value = value
        self.id_kinds = id_kinds
        self.skipped = skipped


def _loaded(pieces, reader) -> _Whole:
    """A file's (share's) pieces, with what its reader saw: id kinds, skipped lines."""
    return _Whole(pieces, getattr(reader, "id_kinds", frozenset()),
                  (getattr(reader, "skipped", 0), tuple(getattr(reader, "skip_reasons", ()))))


def _extracted(extract, reader, extractor):
    """``extract(reader, extractor)`` without the reader's MixedUserIdWarning, which would
    land in a worker's log once per file or share: the client warns once (``_warn_mixed``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixedUserIdWarning)
        return extract(reader, extractor)


def _notes(loaded: _Whole) -> tuple:
    """What the file's (share's) reader saw, and how many users its pieces hold."""
    return loaded.id_kinds, loaded.skipped, sum(len(piece[0]) for piece in loaded.value)


def _warn_mixed(kinds: set) -> None:
    """Once per load, as a local run warns once, also when each file holds one kind."""
    if len(kinds) > 1:
        warnings.warn(MIXED_ID_MESSAGE, MixedUserIdWarning, stacklevel=3)


def _unwrapped(results) -> list:
    return [r.value for r in results]


# -- loading: each input file is extracted where it is read (columnar where the extractor
# allows, as locally), its users split into the partitions (by a stable hash of the user id,
# or in contiguous ranges when there is one file), and each partition merges its users' pieces
# from every file: one ItemSets / TokenCorpus per partition, each user in exactly one. Only
# integer arrays and the pieces' own item strings cross processes.
def _file_readers(reader, n_shares: int) -> list:
    """One reader per input file (a copy with the same settings); a single JSONL file in
    ``n_shares`` shares of its lines (``corpora.line_range``), read on every worker at once;
    the reader itself when its input can't be split (a text folder, an in-memory frame)."""
    from ..ingest.corpora import JsonlReader, TextDirReader
    from ..ingest.corpora.line_range import split_offsets
    if not getattr(reader, "files", None):
        return [reader]
    # absolute: a worker's working directory is not the client's
    files = [Path(os.path.abspath(f)) for f in reader.files]
    if isinstance(reader, TextDirReader):
        return [reader.reading(files[0])]
    if len(files) == 1 and n_shares > 1 and isinstance(reader, JsonlReader):
        return [reader.reading(files[0], share) for share in split_offsets(files[0], n_shares)]
    return [reader.reading(f) for f in files]


def _user_parts(user_ids: list, n_parts: int, alone: bool) -> np.ndarray:
    """Each user's partition: a hash of its id and id type, the same in every process; in
    contiguous ranges of rows when the input is ``alone`` (one file: no other file's users to
    agree with)."""
    if alone:
        return np.arange(len(user_ids), dtype=np.int64) * n_parts // max(len(user_ids), 1)
    return (fingerprints(user_ids, _PART_KEY) % np.uint64(n_parts)).astype(np.int64)


def _take(ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(new offsets, positions) of the CSR rows ``rows``, vectorised."""
    lengths = np.diff(ptr)[rows]
    new_ptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_ptr[1:])
    take = np.repeat(ptr[:-1][rows] - new_ptr[:-1], lengths) + np.arange(new_ptr[-1])
    return new_ptr, take


def _used(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct ids among ``ids``, ascending; ``ids`` renumbered into them), in linear
    time: renumbering keeps the order, so sorted rows stay sorted."""
    used = np.zeros(n, dtype=bool)
    used[ids] = True
    new = np.cumsum(used, dtype=np.int64) - 1
    return np.flatnonzero(used), new[ids].astype(np.int32)


def _compact(strings: list, ids: np.ndarray) -> tuple[list, np.ndarray]:
    """Only the strings ``ids`` use, and the ids renumbered into them."""
    kept, new_ids = _used(ids, len(strings))
    return [strings[i] for i in kept.tolist()], new_ids


def _compact_vocab(vocab: Vocabulary, ids: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """Only the strings ``ids`` use, their item hashes (computed once, while extracting), and
    the ids renumbered into them."""
    kept, new_ids = _used(ids, len(vocab))
    strings = vocab.strings
    return [strings[i] for i in kept.tolist()], vocab.hashes()[kept], new_ids


def _load_itemsets(reader, extractor, n_parts: int, alone: bool) -> _Whole:
    from ..ingest.extract import extract_itemsets
    its = _extracted(extract_itemsets, reader, extractor)
    part = _user_parts(its.user_ids, n_parts, alone)
    pieces = []
    for p in range(n_parts):
        rows = np.flatnonzero(part == p)
        ptr, take = _take(its.indptr, rows)
        strings, hashes, items = _compact_vocab(its.vocab, its.items[take])
        pieces.append((_id_column([its.user_ids[r] for r in rows.tolist()]), strings, hashes,
                       ptr, items, its.counts[take]))
    return _loaded(pieces, reader)


def _id_column(ids: list):
    """User ids as a polars column when they are all strings or all integers (the partition
    numbers them in polars, ``data.builder.UserRows``), else the list itself."""
    import polars as pl
    kinds = {type(u) for u in ids}
    if kinds == {str} or kinds == {int}:
        try:
            return pl.Series(ids, dtype=pl.String if kinds == {str} else pl.Int64)
        except (OverflowError, UnicodeEncodeError, TypeError, ValueError):
            pass   # an integer beyond 64 bits, a lone surrogate: kept as Python objects
    return ids


def _load_sequences(reader, extractor, n_parts: int, alone: bool) -> _Whole:
    from ..ingest.extract import extract_sequences
    corpus = _extracted(extract_sequences, reader, extractor)
    part_of_seq = _user_parts(corpus.user_ids, n_parts, alone)[corpus.seq_user]
    pieces = []
    for p in range(n_parts):
        seqs = np.flatnonzero(part_of_seq == p)
        ptr, take = _take(corpus.seq_ptr, seqs)
        users, seq_user = np.unique(corpus.seq_user[seqs], return_inverse=True)
        strings, tokens = _compact(corpus.vocab.strings, corpus.tokens[take])
        pieces.append(([corpus.user_ids[u] for u in users.tolist()], strings, tokens, ptr,
                       seq_user.reshape(-1)))
    return _loaded(pieces, reader)


def _piece(pieces: _Whole, p: int) -> _Whole:
    return _Whole(pieces.value[p])


class _Partition:
    """One partition's item sets and the identities of its vocabulary (``_identities``),
    hashed once where the partition is built."""

    __slots__ = ("itemsets", "identities")

    def __init__(self, its: ItemSets):
        self.itemsets = its
        self.identities = _identities(its.vocab.hashes(), its.vocab.strings)


def _itemsets_partition(cap: int | None, *wrapped: _Whole) -> _Partition:
    from ..ingest.extract import merge_itemsets
    pieces = _unwrapped(wrapped)
    if len(pieces) == 1:   # one input file: its piece is already grouped, sorted and capped
        user_ids, strings, hashes, indptr, items, counts = pieces[0]
        # ids as a column (_id_column): encoded for the user order there, never listed
        encoded = None if isinstance(user_ids, list) else encode_user_ids(user_ids)
        vocab = Vocabulary.from_strings(list(strings), hashes)
        return _Partition(ItemSets(vocab, user_ids, indptr, items, counts,
                                   encoded_user_ids=encoded))
    return _Partition(merge_itemsets(pieces, cap))


def _corpus_partition(joiner: str, *pieces: _Whole) -> TokenCorpus:
    from ..ingest.extract import merge_sequences
    return merge_sequences(_unwrapped(pieces), joiner)


# -- combining the partitions' answers: by item identity (the public item hash and a second,
# independent one), as numbers ------------------------------------------------------------
def _identities(hashes: np.ndarray, strings: list[str]) -> np.ndarray:
    """(n, 2) uint64: each item's bounding hash and a second hash of its string."""
    return np.stack([hashes, fingerprints(strings, _ID_KEY)], axis=1)


def _unique_rows(idents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct (first hash, second hash) rows and each row's index among them. One
    sort on the first hash when it alone tells the items apart (the usual case)."""
    first, inverse = np.unique(idents[:, 0], return_inverse=True)
    inverse = inverse.reshape(-1)
    second = np.zeros(first.size, dtype=np.uint64)
    second[inverse] = idents[:, 1]
    if np.array_equal(second[inverse], idents[:, 1]):   # no two items share a first hash
        return np.stack([first, second], axis=1), inverse
    uniq, inverse = np.unique(idents, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _an_occurrence(inverse: np.ndarray, n: int) -> np.ndarray:
    """For each of ``n`` distinct rows, the index of one row equal to it."""
    where = np.zeros(n, dtype=np.int64)
    where[inverse] = np.arange(inverse.size)
    return where


def _weights_of(part: _Partition, key: bytes, bounding: Bounding, weighting, exclude):
    w = part.itemsets.weight_sums(key, bounding, weighting, exclude)
    names = list(w.names)
    index = part.itemsets.vocab.index
    ids = np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))
    return _Whole((names, part.identities[ids], w.weights))


def _add_weights(parts: list) -> ItemWeights:
    """The partitions' (names, identities, weights) summed by identity (in partition order)."""
    names = [n for p in parts for n in p[0]]
    uniq, inverse = _unique_rows(
        np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, 2), np.uint64))
    weights = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0)
    return ItemWeights([names[i] for i in _an_occurrence(inverse, len(uniq)).tolist()],
                       uniq[:, 0].copy(),
                       np.bincount(inverse, weights=weights, minlength=len(uniq)))


def _rows_of(part: _Partition, key: bytes, bounding: Bounding):
    """One partition's bounded rows as numbers only: the first of the users' order words (the
    others only on a tie, ``_order_words_of``), row lengths, item ids, own counts and the
    identities of its vocabulary (which the ids index)."""
    b = part.itemsets.bounded_rows(key, bounding)   # its order words: the users' keyed PRFs
    assert b.order_words is not None   # ItemSets.bounded_rows always sets them
    return _Whole((b.order_words[:, 0].copy(), np.diff(b.bounded.indptr).astype(np.int32),
                   b.bounded.items, b.bounded.counts, part.identities))


def _order_words_of(part: _Partition, key: bytes) -> _Whole:
    return _Whole(user_keys(part.itemsets.user_ids, key)[0])


def _strings_at(part: _Partition, ids: np.ndarray) -> _Whole:
    return _Whole(part.itemsets.vocab.strings_at(ids))


class _MergedRows:
    """All partitions' bounded rows (one after the other, ``order`` the keyed order over
    them all), items as ids into the sorted distinct identities (``idents``); ``source(ids)``
    tells, for each, a partition holding it and its position in that partition's table.

    Each part: (order words, row lengths, item ids into the part's table, the users' own
    counts of them, table of identities). Order words are (n, 3), or only their first word (n,): then ``full_words()``
    gives every part's (n, 3) words, asked for only when two users tie on the first word."""

    def __init__(self, parts: list, full_words=None):
        if not parts:
            parts = [(np.zeros((0, 3), np.uint64), np.zeros(0, np.int64),
                      np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros((0, 2), np.uint64))]
        words = np.concatenate([p[0] for p in parts])
        order = self._order(words, full_words)
        lengths = np.concatenate([p[1] for p in parts])
        sizes = [len(p[4]) for p in parts]
        self.offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.offsets[1:])
        self.idents, inverse = _unique_rows(np.concatenate([p[4] for p in parts]))
        self.found_at = _an_occurrence(inverse, len(self.idents))   # a row holding each item
        inverse = inverse.astype(np.int32)
        items = np.concatenate([inverse[off + p[2]] for off, p in zip(self.offsets, parts)])
        indptr = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        counts = np.concatenate([p[3] for p in parts]).astype(np.int32)
        self.bounded = BoundedSets(order, indptr, items, counts)

    @staticmethod
    def _order(words: np.ndarray, full_words) -> np.ndarray:
        if words.ndim == 2:
            return keyed_order(words)
        padded = np.zeros((words.size, 3), dtype=np.uint64)
        padded[:, 0] = words
        order = keyed_order(padded)
        first = words[order]
        if first.size > 1 and (first[1:] == first[:-1]).any():   # ~n²·2⁻⁶⁵: all 192 bits
            order = keyed_order(np.concatenate(full_words()))
        return order

    def source(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = self.found_at[ids]
        part = np.searchsorted(self.offsets, at, side="right") - 1
        return part, at - self.offsets[part]


@contextlib.contextmanager
def _graph_size_unsaid():
    """distributed warns of a large task graph with its size in MiB; where the graph carries
    private data (an in-memory corpus, the candidates' positions) that size is a statistic of
    it, so the warning is not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")
        yield


def _map(client, parts: list, fn, *args) -> list:
    """``fn(partition, *args)`` on every partition, where it lives (results sent as _Whole)."""
    return _unwrapped(client.gather([client.submit(fn, p, *args, pure=False) for p in parts]))


def _holder_counts(part: _Partition, items: list) -> _Whole:
    return _Whole(part.itemsets.holder_counts(items))


def _clipped_count_sums(part: _Partition, items: _Whole, key: bytes, bounding: Bounding,
                        max_count: int, l2_scale: int | None) -> _Whole:
    return _Whole(part.itemsets.clipped_count_sums(items.value, key, bounding, max_count,
                                                   l2_scale))


class DaskItemSets(ItemSetData):
    """Item sets on the cluster (``bounding.ItemSetData``): futures of one ItemSets per
    partition (with its items' identities), each user's items in exactly one."""

    def __init__(self, client, parts: list):
        self.client, self.parts = client, parts

    def _map(self, fn, *args) -> list:
        return _map(self.client, self.parts, fn, *args)

    def weight_sums(self, key: bytes, bounding: Bounding, weighting,
                    exclude: frozenset[str] = frozenset()) -> ItemWeights:
        return _add_weights(self._map(_weights_of, key, bounding, weighting, exclude))

    def bounded_rows(self, key: bytes, bounding: Bounding) -> BoundedRows:
        merged = _MergedRows(self._map(_rows_of, key, bounding),
                             lambda: self._map(_order_words_of, key))

        def names_of(ids: np.ndarray) -> list[str]:
            part, pos = merged.source(np.asarray(ids, dtype=np.int64))
            order = np.argsort(part, kind="stable")   # the requests, partition by partition
            ends = np.searchsorted(part[order], np.arange(len(self.parts) + 1))
            with _graph_size_unsaid():   # the size: here, of the candidates
                found = _unwrapped(self.client.gather([
                    self.client.submit(_strings_at, f, pos[order[ends[p]:ends[p + 1]]],
                                       pure=False)
                    for p, f in enumerate(self.parts)]))
            got = [s for strings in found for s in strings]
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            return [got[i] for i in rank.tolist()]
        return BoundedRows(merged.bounded, merged.idents[:, 0].copy(), names_of)

    def holder_counts(self, items) -> np.ndarray:
        items = list(items)
        parts = self._map(_holder_counts, items)
        return np.sum(parts, axis=0) if parts else np.zeros(len(items))

    def clipped_count_sums(self, items, key: bytes, bounding: Bounding,
                           max_count: int, l2_scale: int | None = None) -> np.ndarray:
        """Each partition's sums (its users are whole in it, so the sums add); the items are
        public (a released vocabulary) and sent as one pickle."""
        items = list(items)
        total = np.zeros(len(items), dtype=np.int64)
        for sums in self._map(_clipped_count_sums, _Whole(items), key, bounding, max_count,
                              l2_scale):
            total += sums
        return total

    def __repr__(self) -> str:
        return "<DaskItemSets (private data on the cluster)>"


def _replayed(corpus: TokenCorpus, bounding: Bounding, released: list):
    """This partition's levels with the released ones (public, broadcast) set."""
    return corpus.ngram_levels(bounding).replay(released)


def _level_of(corpus: TokenCorpus, bounding: Bounding, released: list, n: int, key: bytes,
              level_bounding=None):
    levels = _replayed(corpus, bounding, released)
    grams, w = levels.level_weights(n, key, level_bounding)
    return _Whole(dict(zip(grams, w.tolist())))


def _level_rows_of(corpus: TokenCorpus, bounding: Bounding, released: list, n: int,
                   key: bytes, level_bounding):
    """One partition's level-n bounded rows as numbers (as ``_rows_of``), and the grams of
    its table."""
    grams, rows = _replayed(corpus, bounding, released).level_item_rows(
        n, key, level_bounding)
    ids, items = _used(rows.bounded.items, len(grams))   # only the grams some row keeps
    grams = grams.take(ids)
    table = _identities(rows.hashes[ids], [corpus.joiner.join(g) for g in grams])
    return _Whole((rows.order_words, np.diff(rows.bounded.indptr), items, rows.bounded.counts,
                   table, grams))


def _add_dicts(parts):
    total: dict = {}
    for d in parts:
        for g, x in d.items():
            total[g] = total.get(g, 0.0) + x
    return total


class _DaskLevels:
    """DPNE levels on the cluster: each partition replays the released levels (public,
    broadcast) on its own TokenCorpus and weighs level n; the sums come back."""

    def __init__(self, data: DaskSequences, bounding: Bounding):
        self.data, self.bounding, self.joiner = data, bounding, data.joiner
        self.released: list[list[Gram]] = []

    def level_weights(self, n: int, key: bytes, bounding: Bounding | None = None):
        total = _add_dicts(self.data._map(_level_of, self.bounding, self.released[:n - 1],
                                          n, key, bounding))
        grams = list(total)
        return self._grams(n, grams), np.fromiter((total[g] for g in grams), dtype=np.float64,
                                                  count=len(grams))

    def level_rows(self, n: int, key: bytes, bounding: Bounding | None = None):
        """All users' level-n rows in keyed order, merged from the partitions as
        ``DaskItemSets.bounded_rows`` merges item rows (users are whole in one partition)."""
        parts = self.data._map(_level_rows_of, self.bounding, self.released[:n - 1],
                               n, key, bounding)
        merged = _MergedRows([p[:5] for p in parts])
        grams = [g for p in parts for g in p[5]]
        return self._grams(n, [grams[i] for i in merged.found_at.tolist()]), merged.bounded

    def level_chunks(self, n: int, key: bytes, bounding: Bounding | None = None):
        """``level_rows`` as one chunk (the merged rows are held whole here)."""
        grams, b = self.level_rows(n, key, bounding)
        return grams, iter([b])

    def _grams(self, n: int, grams: list[Gram]) -> LevelGrams:
        """Merged n-grams keyed as the local levels key them (candidate keys of C_n)."""
        return LevelGrams.of_grams(grams, self.released[n - 2] if n > 1 else None, self.joiner)

    def set_released(self, n: int, grams: list[Gram]) -> None:
        self.released = self.released[:n - 1] + [list(grams)]


class DaskSequences(SequenceData):
    """Token sequences on the cluster (``bounding.SequenceData``): futures of one TokenCorpus
    per partition, each user's documents in exactly one."""

    def __init__(self, client, parts: list, joiner: str):
        self.client, self.parts, self.joiner = client, parts, joiner

    def _map(self, fn, *args) -> list:
        return _map(self.client, self.parts, fn, *args)

    def ngram_levels(self, bounding: Bounding) -> _DaskLevels:
        return _DaskLevels(self, bounding)

    def __repr__(self) -> str:
        return "<DaskSequences (private data on the cluster)>"


def _prepare_worker() -> None:
    import dp_vocab.ingest.extract  # noqa: F401 - imported for its side effect: loaded modules
    import dp_vocab.ingest.text.columnar  # noqa: F401


def _ignore_interrupts() -> None:
    """A LocalCluster's worker processes share the terminal's process group: Ctrl-C reached
    them too, and each printed its KeyboardInterrupt traceback. The run's own process handles
    it and closes the cluster, which ends them."""
    import signal
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:   # not this worker's main thread: leave the default
        pass


@contextlib.contextmanager
def _interrupt_deferred():
    """Ctrl-C held back while a LocalCluster starts, then raised: raised inside LocalCluster's
    constructor it would leave the workers running, unknown to close(), writing into the
    folder close() removes. A worker the same Ctrl-C reached (the terminal's process group)
    fails the start: that failure is the interrupt too. (Only the main thread handles
    signals.)"""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    except Exception:
        if pending:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


@register_backend
class DaskBackend(Backend):
    name = "dask"

    @classmethod
    def from_run(cls, run: dict) -> "DaskBackend":
        return cls(scheduler_address=run.get("scheduler_address"),
                   n_workers=run.get("n_workers", 2),
                   tls={k: run[k] for k in TLS_KEYS if run.get(k) is not None})

    def __init__(self, scheduler_address: str | None = None, n_workers: int = 2,
                 tls: dict | None = None):
        """``tls``: ``tls_ca_file``, ``tls_cert`` and optionally ``tls_key`` (PEM files) for a
        tls:// scheduler (``settings.check_run`` says which addresses a recipe may use)."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ParameterError("run.backend", "dask", "an installed dask[distributed]",
                                 "pip install 'dask[distributed]>=2023.1' (or '.[dask]' in a "
                                 "dp-vocab checkout)") from None
        self.scheduler_address = scheduler_address
        self.n_workers = int(n_workers)
        self.scratch: str | None = None
        self.cluster: Any = None
        self.client: Any = None
        try:
            self._start(Client, LocalCluster, tls)
        except BaseException:   # Ctrl-C or an error while starting: nothing left behind
            self.close()
            raise

    def _start(self, Client, LocalCluster, tls: dict | None) -> None:
        scheduler_address = self.scheduler_address
        if scheduler_address:
            security = None
            if tls:
                from distributed.security import Security
                security = Security(tls_ca_file=tls["tls_ca_file"],
                                    tls_client_cert=tls["tls_cert"],
                                    tls_client_key=tls.get("tls_key"), require_encryption=True)
            self.client = Client(scheduler_address, security=security)
        else:
            import logging

            import dask
            # the workers' folders (their worker-*.dirlock files, any spilled data) in a folder
            # of this run, removed by close() whatever happened, Ctrl-C included
            self.scratch = tempfile.mkdtemp(prefix="dp-vocab-dask-")
            # no dashboard and of the scheduler's web pages only /health (on 127.0.0.1): the
            # others serve the tasks' exceptions, which may quote the input, and statistics of
            # the data (bytes held, task counts); and the workers log no task failure (its text
            # would reach this process's stderr): the error reaches the caller, who decides
            # what to show
            with dask.config.set({"distributed.scheduler.http.routes":
                                  ["distributed.http.health"],
                                  "temporary-directory": self.scratch}), _interrupt_deferred():
                # (its web server on a free port: 8787 may be another cluster's)
                self.cluster = LocalCluster(
                    n_workers=self.n_workers, threads_per_worker=1, processes=True,
                    dashboard_address=None, silence_logs=logging.CRITICAL,
                    local_directory=self.scratch,
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0", "dashboard": False})
            self.client = Client(self.cluster)
            self.client.wait_for_workers(self.n_workers)
            self.client.run(_ignore_interrupts)   # our own workers only, never a cluster's
        # each worker imports what its tasks run now, all at once, as a local run has before it
        # reads: otherwise the second worker imports only once the first has read the file
        try:
            self.client.run(_prepare_worker)
        except ImportError:
            raise ParameterError("run.scheduler_address", scheduler_address,
                                 "a cluster whose workers have dp-vocab installed",
                                 "pip install dp-vocab on every worker") from None

    def _slots(self) -> list[str]:
        """One worker address per worker thread: a partition each."""
        if self.cluster is not None:
            self.client.wait_for_workers(self.n_workers)
        else:
            self.client.wait_for_workers(1)
        workers = self.client.scheduler_info()["workers"]
        return [a for a in sorted(workers) for _ in range(workers[a].get("nthreads", 1))]

    def _load(self, reader, extractor, sequences: bool, progress):
        from distributed import wait

        client, slots = self.client, self._slots()
        client.run(_prepare_worker)   # again: a worker restarted since would import as it reads
        load = _load_sequences if sequences else _load_itemsets
        readers = _file_readers(reader, len(slots))
        with _graph_size_unsaid():   # a reader may hold the corpus (a DataFrame)
            per_file = [client.submit(load, r, extractor, len(slots), len(readers) == 1,
                                      pure=False) for r in readers]
        build, arg = (_corpus_partition, extractor.joiner) if sequences else \
            (_itemsets_partition, getattr(extractor, "max_distinct_per_user", None))
        parts = [client.submit(build, arg, *[client.submit(_piece, f, p, pure=False)
                                             for f in per_file],
                               workers=[w], allow_other_workers=True, pure=False)
                 for p, w in enumerate(slots)]
        wait(parts)   # one ItemSets / TokenCorpus per worker thread, each user in exactly one
        wait(per_file)
        for f in per_file + parts:   # the first file's (share's) error first, as locally
            if f.status == "error":
                f.result()   # the reader's or extractor's own error, raised here
        notes = client.gather([client.submit(_notes, f, pure=False) for f in per_file])
        _warn_mixed(set().union(*(kinds for kinds, _, _ in notes)))
        if hasattr(reader, "add_skipped"):   # the workers' skipped lines, in file order
            for _, (n, reasons), _ in notes:
                reader.add_skipped(n, reasons)
        data = DaskSequences(client, parts, extractor.joiner) if sequences else \
            DaskItemSets(client, parts)
        return data, sum(users for _, _, users in notes)

    def describe(self) -> dict:
        return {"backend": "dask",
                "scheduler": self.scheduler_address or f"LocalCluster({self.n_workers} workers)"}

    def close(self) -> None:
        import logging
        # workers may log a failed heartbeat while the local cluster shuts down: not an error
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            if self.client is not None:
                self.client.close()
            if self.cluster is not None:
                self.cluster.close()
        finally:   # also when a second Ctrl-C interrupts the closing
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)


__all__ = ["DaskBackend", "DaskItemSets", "DaskSequences"]
