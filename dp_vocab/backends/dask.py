"""The Dask backend: user data lives on the cluster as one small ``ItemSets`` (or
``TokenCorpus``) per partition, and every question a mechanism asks (``bounding.UserData``) is
answered by asking each partition the same question, with the same code as locally, and
combining the answers: sums are added, bounded rows are merged in keyed order (order keys and
item hashes only: no text leaves the workers for them). One implementation of the privacy core,
two engines: for a fixed key the histograms equal the local ones (integer sums bit for bit,
fractional sums up to summation order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..bounding import (Bounded, Bounding, BoundedRows, ItemWeights, Weighting, keyed_order)
from ..errors import ParameterError
from ..itemsets import (ItemSets, ItemSetsBuilder, item_hashes, needs_item_sets,
                        needs_sequences)
from ..sequences import Gram, TokenCorpus


# -- loading: documents → per-user data → one ItemSets / TokenCorpus per partition ----------
def _read_file(path: str, reader_args: dict):
    from ..corpora import JsonlReader
    return list(JsonlReader(path, **reader_args))


def _cap_distinct(c: Counter, cap: int | None) -> Counter:
    """A user's items capped to the ``cap`` smallest item hashes, as ``ItemSetsBuilder`` does.
    Capping partial counters is exact: an item among the user's ``cap`` smallest hashes is
    among the smallest of every part that holds it, so it is never dropped and its count is
    whole."""
    if cap is None or len(c) <= cap:
        return c
    items = list(c)
    h = item_hashes(items).tolist()
    keep = sorted(range(len(items)), key=lambda i: (h[i], items[i]))[:cap]  # ties: the string
    return Counter({items[i]: c[items[i]] for i in keep})


def _tokenize(docs, extractor):
    cap = getattr(extractor, "max_distinct_per_user", None)
    per_user: dict = {}
    for user, text in docs:
        c = per_user.get(user)
        if c is None:
            c = per_user[user] = Counter()
        c.update(extractor(text))
        if cap is not None and len(c) > 2 * cap:  # memory stays O(cap) per user
            per_user[user] = _cap_distinct(c, cap)
    return [(u, _cap_distinct(c, cap)) for u, c in per_user.items()]


def _merger(cap: int | None):
    def merge(a: Counter, b: Counter) -> Counter:
        out = Counter(a)
        out.update(b)
        return _cap_distinct(out, cap)
    return merge


def _runs(docs, extractor):
    per_user: dict = {}
    for user, text in docs:
        per_user.setdefault(user, []).extend(extractor.runs(text))
    return list(per_user.items())


def _itemsets_partition(pairs) -> list[ItemSets]:
    builder = ItemSetsBuilder()
    for user, counts in pairs:
        builder.add_counts(user, counts)
    return [builder.build()]


def _corpus_partition(pairs, joiner: str) -> list[TokenCorpus]:
    return [TokenCorpus.from_user_runs(pairs, joiner)]


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
    b = its.bounded_rows(key, bounding)   # its order words: the users' HMACs, computed once
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


def _strings_of(its: ItemSets, wanted: frozenset) -> dict[tuple[int, int], str]:
    first = {h for h, _ in wanted}
    hashes = its.vocab.hashes()
    ids = np.array([i for i, h in enumerate(hashes.tolist()) if h in first], dtype=np.int64)
    if not ids.size:
        return {}
    strings = its.vocab.strings
    return {ident: strings[i] for i, ident in zip(ids.tolist(), map(
        tuple, _identities(its, ids).tolist())) if ident in wanted}


def _merge_maps(parts) -> dict:
    out: dict = {}
    for d in parts:
        out.update(d)
    return out


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
            found = self.parts.map(_strings_of, frozenset(wanted)) \
                .reduction(_merge_maps, _merge_maps).compute()
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


def _level_of(corpus: TokenCorpus, bounding: Bounding, released: list, direct, n: int,
              key: bytes):
    levels = corpus.ngram_levels(bounding)
    if direct is None:
        levels.replay(released)
    else:
        levels.set_released_grams(*direct)
    grams, w = levels.level_weights(n, key)
    return dict(zip(grams, w.tolist()))


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

    def level_weights(self, n: int, key: bytes):
        total = self.parts.map(_level_of, self.bounding, self.released[:n - 1], self.direct, n,
                               key).reduction(_add_dicts, _add_dicts).compute()
        grams = list(total)
        return grams, np.fromiter((total[g] for g in grams), dtype=np.float64, count=len(grams))

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

        from ..corpora import JsonlReader
        if not isinstance(reader, JsonlReader):
            raise ParameterError("corpus reader", type(reader).__name__,
                                 "dp_vocab.jsonl.v1 on the dask backend")
        files = [str(f) for f in reader.files]  # one task per input file
        args = {"user_field": reader.user_field, "text_field": reader.text_field,
                "on_error": reader.on_error, "max_line_bytes": reader.max_line_bytes}
        docs = db.from_sequence(files, npartitions=len(files)).map(_read_file, args).flatten()
        n_parts = max(4 * self.n_workers, len(files))
        docs = docs.repartition(npartitions=n_parts)
        from distributed import wait
        if sequences:  # DPNE: token runs per user, grouped across partitions and files
            per_user = docs.map_partitions(_runs, extractor).foldby(
                lambda kv: kv[0], lambda acc, kv: acc + kv[1], [], lambda a, b: a + b, [])
            parts = per_user.map_partitions(_corpus_partition, extractor.joiner).persist()
            wait(parts)   # one TokenCorpus per partition, each user in exactly one
            return DaskSequences(parts, extractor.joiner)
        merge = _merger(getattr(extractor, "max_distinct_per_user", None))
        per_user = docs.map_partitions(_tokenize, extractor) \
            .foldby(lambda kv: kv[0], lambda acc, kv: merge(acc, kv[1]), Counter(),
                    merge, Counter())
        parts = per_user.map_partitions(_itemsets_partition).persist()
        wait(parts)       # one ItemSets per partition, each user in exactly one
        return DaskUserItems(parts)

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
