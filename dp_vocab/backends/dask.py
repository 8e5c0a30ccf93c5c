"""The Dask backend: user data lives on the cluster as one small ``ItemSets`` (or
``TokenCorpus``) per partition, and every question a mechanism asks (``bounding.UserData``) is
answered by asking each partition the same question, with the same code as locally, and
combining the answers: sums are added, bounded rows are merged in keyed order (order keys and
item hashes only: no text leaves the workers for them). One implementation of the privacy core,
two engines: for a fixed key the histograms equal the local ones (integer sums bit for bit,
fractional sums up to summation order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..bounding import (Bounded, Bounding, BoundedRows, ItemWeights, Weighting, keyed_order)
from ..errors import ParameterError
from ..itemsets import ItemSets, item_hashes, needs_item_sets, needs_sequences
from ..sequences import Gram, TokenCorpus


# -- loading: each input file is extracted where it is read (columnar where the extractor
# allows, as locally), its users split by a stable hash into the partitions, and each partition
# merges its users' pieces from every file: one ItemSets / TokenCorpus per partition, each user
# in exactly one. Only integer arrays and the pieces' own item strings cross processes.
def _file_readers(reader) -> list:
    """One reader per input file (a copy with the same settings), or the reader itself when
    its input can't be split (a text folder, an in-memory frame)."""
    import copy

    from ..corpora import TextDirReader
    if isinstance(reader, TextDirReader) or not getattr(reader, "files", None):
        return [reader]
    out = []
    for f in reader.files:
        r = copy.copy(reader)
        r.files, r.path, r._id_kinds = [f], f, set()
        out.append(r)
    return out


def _user_parts(user_ids: list, n_parts: int) -> np.ndarray:
    """Each user's partition: a hash of its id and id type, the same in every process."""
    keys = [f"{type(u).__name__}:{u!r}" for u in user_ids]
    return (item_hashes(keys) % np.uint64(n_parts)).astype(np.int64)


def _take(ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(new offsets, positions) of the CSR rows ``rows``, vectorised."""
    lengths = np.diff(ptr)[rows]
    new_ptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_ptr[1:])
    take = np.repeat(ptr[:-1][rows] - new_ptr[:-1], lengths) + np.arange(new_ptr[-1])
    return new_ptr, take


def _compact(strings: list, ids: np.ndarray) -> tuple[list, np.ndarray]:
    """Only the strings ``ids`` use, and the ids renumbered into them."""
    used, new_ids = np.unique(ids, return_inverse=True)
    return [strings[i] for i in used.tolist()], new_ids.reshape(-1)


def _load_itemsets(reader, extractor, n_parts: int) -> list[tuple]:
    from ..extraction import extract_itemsets
    its = extract_itemsets(reader, extractor)
    part = _user_parts(its.user_ids, n_parts)
    pieces = []
    for p in range(n_parts):
        rows = np.flatnonzero(part == p)
        ptr, take = _take(its.indptr, rows)
        strings, items = _compact(its.vocab.strings, its.items[take])
        pieces.append(([its.user_ids[r] for r in rows.tolist()], strings, ptr, items,
                       its.counts[take]))
    return pieces


def _load_sequences(reader, extractor, n_parts: int) -> list[tuple]:
    from ..extraction import extract_sequences
    corpus = extract_sequences(reader, extractor)
    part_of_seq = _user_parts(corpus.user_ids, n_parts)[corpus.seq_user]
    pieces = []
    for p in range(n_parts):
        seqs = np.flatnonzero(part_of_seq == p)
        ptr, take = _take(corpus.seq_ptr, seqs)
        users, seq_user = np.unique(corpus.seq_user[seqs], return_inverse=True)
        strings, tokens = _compact(corpus.vocab.strings, corpus.tokens[take])
        pieces.append(([corpus.user_ids[u] for u in users.tolist()], strings, tokens, ptr,
                       seq_user.reshape(-1)))
    return pieces


def _piece(pieces: list, p: int):
    return pieces[p]


def _itemsets_partition(pieces, cap: int | None) -> list[ItemSets]:
    from ..extraction import merge_itemsets
    return [merge_itemsets(pieces, cap)]


def _corpus_partition(pieces, joiner: str) -> list[TokenCorpus]:
    from ..extraction import merge_sequences
    return [merge_sequences(pieces, joiner)]


# -- combining the partitions' answers ------------------------------------------------------
def _add_weights(parts: Sequence[ItemWeights]) -> ItemWeights:
    total: dict[str, list] = {}
    for p in parts:
        for name, h, w in zip(p.names, p.hashes.tolist(), p.weights.tolist()):
            cell = total.get(name)
            if cell is None:
                total[name] = [h, w]
            else:
                cell[1] += w
    names = list(total)
    return ItemWeights(names, np.array([total[n][0] for n in names], dtype=np.uint64),
                       np.array([total[n][1] for n in names], dtype=np.float64))


_ID = b"dp-vocab-id"  # a second, independent hash: items are told apart by 128 bits


def _identities(its: ItemSets, ids: np.ndarray) -> np.ndarray:
    """(n, 2) uint64: the bounding hash and a second hash of each item id."""
    uniq, inv = np.unique(ids, return_inverse=True)
    strings = its.vocab.strings
    second = item_hashes([strings[i] for i in uniq.tolist()], person=_ID)
    return np.stack([its.vocab.hashes()[ids], second[inv]], axis=1)


def _rows_of(its: ItemSets, key: bytes, bounding: Bounding):
    """One partition's bounded rows as numbers only: order words, row lengths, item
    identities (two 64-bit hashes)."""
    b = its.bounded_rows(key, bounding)   # its order words: the users' keyed PRF values, computed once
    return b.order_words, np.diff(b.bounded.indptr), _identities(its, b.bounded.items)


def _merge_rows(parts) -> tuple[Bounded, np.ndarray]:
    """All partitions' rows in keyed order, items as ids into the sorted unique identities."""
    parts = list(parts)
    words = np.concatenate([w for w, _, _ in parts]) if parts else np.zeros((0, 3), np.uint64)
    lengths = np.concatenate([n for _, n, _ in parts]) if parts else np.zeros(0, np.int64)
    idents = np.concatenate([h for _, _, h in parts]) if parts else np.zeros((0, 2), np.uint64)
    order = keyed_order(words)
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    new_len = lengths[order]
    indptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(new_len, out=indptr[1:])
    take = np.repeat(starts[:-1][order] - indptr[:-1], new_len) + np.arange(indptr[-1])
    uniq, ids = _unique_rows(idents[take])
    bounded = Bounded(np.arange(lengths.size, dtype=np.int64), indptr,
                      ids.astype(np.int32), np.ones(ids.size, dtype=np.int32))
    return bounded, uniq   # rows already in keyed order; uniq: (n_items, 2) identities


def _unique_rows(idents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct (first hash, second hash) rows and each row's index among them. One
    sort on the first hash when it alone tells the items apart (the usual case)."""
    first, inverse = np.unique(idents[:, 0], return_inverse=True)
    second = np.zeros(first.size, dtype=np.uint64)
    second[inverse] = idents[:, 1]
    if np.array_equal(second[inverse], idents[:, 1]):   # no two items share a first hash
        return np.stack([first, second], axis=1), inverse.reshape(-1)
    uniq, inverse = np.unique(idents, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _strings_of(its: ItemSets, first: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Identities and strings of this partition's items whose first hash is in ``first``
    (sorted): vectorised, so a large candidate set costs one ``isin`` per partition."""
    ids = np.flatnonzero(np.isin(its.vocab.hashes(), first, assume_unique=False))
    strings = its.vocab.strings
    return _identities(its, ids), [strings[i] for i in ids.tolist()]


def _add_arrays(parts):
    parts = list(parts)
    return np.sum(parts, axis=0) if parts else None


class DaskUserItems:
    """Item sets on the cluster (``bounding.UserData``): a bag of one ItemSets per partition."""

    def __init__(self, parts):
        self.parts = parts

    def weight_sums(self, key: bytes, bounding: Bounding, weighting: Weighting,
                    exclude: frozenset[str] = frozenset()) -> ItemWeights:
        return self.parts.map(lambda its: its.weight_sums(key, bounding, weighting, exclude)) \
            .reduction(_add_weights, _add_weights).compute()

    def bounded_rows(self, key: bytes, bounding: Bounding) -> BoundedRows:
        bounded, idents = _merge_rows(self.parts.map(_rows_of, key, bounding).compute())

        def names_of(ids: np.ndarray) -> list[str]:
            wanted = [tuple(x) for x in idents[ids].tolist()]
            found: dict = {}
            for ident, strings in self.parts.map(_strings_of,
                                                 np.unique(idents[ids, 0])).compute():
                found.update(zip(map(tuple, ident.tolist()), strings))
            return [found[w] for w in wanted]
        return BoundedRows(bounded, idents[:, 0].copy(), names_of)

    def holder_counts(self, items: Sequence[str]) -> np.ndarray:
        items = list(items)
        total = self.parts.map(lambda its: its.holder_counts(items)) \
            .reduction(_add_arrays, _add_arrays).compute()
        return np.zeros(len(items)) if total is None else total

    def ngram_levels(self, bounding: Bounding):
        raise needs_sequences()   # the same clear error as locally

    def __repr__(self) -> str:
        return "<DaskUserItems (private data on the cluster)>"


def _replayed(corpus: TokenCorpus, bounding: Bounding, released: list, direct):
    """This partition's levels with the released ones (public, broadcast) set."""
    levels = corpus.ngram_levels(bounding)
    if direct is None:
        return levels.replay(released)
    levels.set_released_grams(*direct)
    return levels


def _level_of(corpus: TokenCorpus, bounding: Bounding, released: list, direct, n: int,
              key: bytes, level_bounding=None):
    levels = _replayed(corpus, bounding, released, direct)
    grams, w = levels.level_weights(n, key, level_bounding)
    return dict(zip(grams, w.tolist()))


def _level_rows_of(corpus: TokenCorpus, bounding: Bounding, released: list, direct, n: int,
                   key: bytes, level_bounding):
    """One partition's level-n bounded rows as numbers (as ``_rows_of``), and its grams by
    identity."""
    grams, rows = _replayed(corpus, bounding, released, direct).level_item_rows(
        n, key, level_bounding)
    second = item_hashes([corpus.joiner.join(g) for g in grams], person=_ID)
    idents = np.stack([rows.hashes, second], axis=1)
    b = rows.bounded
    return (rows.order_words, np.diff(b.indptr), idents[b.items],
            dict(zip(map(tuple, idents.tolist()), grams)))


def _add_dicts(parts):
    total: dict = {}
    for d in parts:
        for g, x in d.items():
            total[g] = total.get(g, 0.0) + x
    return total


class _DaskLevels:
    """DPNE levels on the cluster: each partition replays the released levels (public,
    broadcast) on its own TokenCorpus and weighs level n; the sums come back."""

    def __init__(self, parts, bounding: Bounding, joiner: str):
        self.parts, self.bounding, self.joiner = parts, bounding, joiner
        self.released: list[list[Gram]] = []
        self.direct: tuple[int, list[Gram]] | None = None   # S_{n−1} given alone (tests)

    def level_weights(self, n: int, key: bytes, bounding: Bounding | None = None):
        total = self.parts.map(_level_of, self.bounding, self.released[:n - 1], self.direct, n,
                               key, bounding).reduction(_add_dicts, _add_dicts).compute()
        grams = list(total)
        return grams, np.fromiter((total[g] for g in grams), dtype=np.float64, count=len(grams))

    def level_rows(self, n: int, key: bytes, bounding: Bounding | None = None):
        """All users' level-n rows in keyed order, merged from the partitions as
        ``DaskUserItems.bounded_rows`` merges item rows (users are whole in one partition)."""
        parts = self.parts.map(_level_rows_of, self.bounding, self.released[:n - 1], self.direct,
                               n, key, bounding).compute()
        grams_of: dict = {}
        for _, _, _, found in parts:
            grams_of.update(found)
        bounded, idents = _merge_rows([(w, k, i) for w, k, i, _ in parts])
        return [grams_of[tuple(x)] for x in idents.tolist()], bounded

    def set_released(self, n: int, grams: list[Gram]) -> None:
        self.released = self.released[:n - 1] + [list(grams)]
        self.direct = None

    def set_released_grams(self, n: int, grams: list[Gram]) -> None:
        self.direct = (n, list(grams))


class DaskSequences:
    """Token sequences on the cluster (``bounding.UserData``): one TokenCorpus per partition."""

    def __init__(self, parts, joiner: str):
        self.parts, self.joiner = parts, joiner

    def ngram_levels(self, bounding: Bounding) -> _DaskLevels:
        return _DaskLevels(self.parts, bounding, self.joiner)

    def bounded_rows(self, *args, **kwargs):
        raise needs_item_sets()

    weight_sums = holder_counts = bounded_rows

    def __repr__(self) -> str:
        return "<DaskSequences (private data on the cluster)>"


class DaskBackend:
    name = "dask"

    def __init__(self, scheduler_address: str | None = None, n_workers: int = 2):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ParameterError("run.backend", "dask", "an installed dask[distributed]",
                                 "pip install 'dp-vocab[dask]'") from None
        self.scheduler_address = scheduler_address
        self.n_workers = int(n_workers)
        if scheduler_address:
            self.cluster = None
            self.client = Client(scheduler_address)
        else:
            self.cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1,
                                        processes=True, dashboard_address=":0")
            self.client = Client(self.cluster)

    def load(self, reader, extractor, sequences: bool = False, progress=None):
        import dask.bag as db
        from dask import delayed
        from distributed import wait

        n_parts = 2 * max(self.n_workers, 1)
        load = _load_sequences if sequences else _load_itemsets
        per_file = [delayed(load, pure=False)(r, extractor, n_parts)
                    for r in _file_readers(reader)]
        if sequences:
            parts = [delayed(_corpus_partition)([delayed(_piece)(f, p) for f in per_file],
                                                extractor.joiner) for p in range(n_parts)]
        else:
            cap = getattr(extractor, "max_distinct_per_user", None)
            parts = [delayed(_itemsets_partition)([delayed(_piece)(f, p) for f in per_file],
                                                  cap) for p in range(n_parts)]
        bag = db.from_delayed(parts).persist()
        wait(bag)   # one ItemSets / TokenCorpus per partition, each user in exactly one
        return DaskSequences(bag, extractor.joiner) if sequences else DaskUserItems(bag)

    def describe(self) -> dict:
        return {"backend": "dask",
                "scheduler": self.scheduler_address or f"LocalCluster({self.n_workers} workers)"}

    def close(self) -> None:
        import logging
        # workers may log a failed heartbeat while the local cluster shuts down: not an error
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


__all__ = ["DaskBackend", "DaskSequences", "DaskUserItems"]
