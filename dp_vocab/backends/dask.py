"""The Dask backend: reading, tokenizing, per-user grouping, bounding and the sums of parallel
mechanisms run as Dask tasks; sequential policies get the users' bounded item lists streamed to
the driver in keyed-hash order (never raw text).

Bounding here reproduces ``_kernels.bound_rows`` exactly (same keyed seeds, same item hashes, the
Δ0 smallest (priority, random key) pairs), so histograms equal the local ones for a fixed key (up
to float summation order for fractional weights).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import ParameterError
from ..mechanisms.base import MISSING_RANK, Bounded, item_hashes
from ..mechanisms.user_order import user_digest

_M1, _M2, _M3 = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
                 np.uint64(0x94D049BB133111EB))


def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + _M1
        z = (z ^ (z >> np.uint64(30))) * _M2
        z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


def bound_user(items: list[str], counts: list[int], seed: int, max_items: int, mode: int,
               ordered: bool, ranks: dict | None) -> list[str]:
    """One user's kept items, as ``bound_rows`` keeps them (priority order when ``ordered``)."""
    n = len(items)
    if n <= max_items and not ordered:
        return list(items)
    rand = _splitmix64(np.uint64(seed) ^ _splitmix64(item_hashes(items)))
    prim = np.zeros(n, dtype=np.uint64)
    if mode != 0:
        prim = np.uint64(0xFFFFFFFF) - np.minimum(np.asarray(counts, dtype=np.uint64),
                                                  np.uint64(0xFFFFFFFF))
        if mode == 2:
            r = np.array([ranks.get(w, MISSING_RANK) for w in items], dtype=np.uint64)
            prim |= r << np.uint64(32)
    keep = np.lexsort((rand, prim))[:max_items]
    return [items[i] for i in keep.tolist()]


def _read_file(path: str, reader_args: dict):
    from ..corpora import JsonlReader
    return list(JsonlReader(path, **reader_args))


def _tokenize(docs, extractor):
    per_user: dict = {}
    for user, text in docs:
        c = per_user.get(user)
        if c is None:
            c = per_user[user] = Counter()
        c.update(extractor(text))
    return list(per_user.items())


def _merge(a: Counter, b: Counter) -> Counter:
    out = Counter(a)
    out.update(b)
    return out


def _bounded_partition(part, key, spec):
    max_items, mode, ordered, ranks = spec
    out = []
    for user, counts in part:
        order_key, seed = user_digest(user, key)
        items = list(counts)
        kept = bound_user(items, [counts[w] for w in items], seed, max_items, mode, ordered, ranks)
        out.append((order_key, kept))
    return out


def _sum_partition(part, key, spec, kind, exclude):
    sums: dict = {}
    for user, counts in part:
        if exclude:
            counts = {w: c for w, c in counts.items() if w not in exclude}
        _, seed = user_digest(user, key)
        items = list(counts)
        kept = bound_user(items, [counts[w] for w in items], seed, *spec)
        if not kept:
            continue
        add = 1.0 if kind == "count" else len(kept) ** -kind[1]
        for w in kept:
            sums[w] = sums.get(w, 0.0) + add
    return [sums]


def _add_dicts(parts):
    total: dict = {}
    for d in parts:
        for w, x in d.items():
            total[w] = total.get(w, 0.0) + x
    return total


class DaskUserItems:
    """Per-user item counts persisted on the cluster: a bag of (user id, {item: count})."""

    def __init__(self, bag, client):
        self.bag, self.client = bag, client

    def _spec(self, mech, max_items=None):
        mode, ordered, ranks = mech._priority()
        return (max_items or mech.max_items_per_user, mode, ordered, ranks)

    def spread_sums(self, key: bytes, spec, kind, exclude=frozenset()) -> tuple[list, np.ndarray]:
        """Σ over users of the kind's weight on each kept item, summed on the cluster."""
        total = self.bag.map_partitions(_sum_partition, key, spec, kind, exclude) \
            .reduction(_add_dicts, _add_dicts).compute()
        names = list(total)
        return names, np.fromiter((total[w] for w in names), dtype=np.float64, count=len(names))

    def stream_bounded(self, key: bytes, spec):
        """Bounded item lists in keyed-hash order, streamed partition by partition."""
        from ..itemsets import Vocabulary
        rows = []
        for part in self.bag.map_partitions(_bounded_partition, key, spec).to_delayed():
            rows.extend(part.compute())
        rows.sort(key=lambda r: r[0])
        vocab = Vocabulary()
        add = vocab.add
        lengths = np.fromiter((len(r[1]) for r in rows), dtype=np.int64, count=len(rows))
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        items = np.fromiter((add(w) for _, kept in rows for w in kept), dtype=np.int32,
                            count=int(indptr[-1]))
        order = np.arange(len(rows), dtype=np.int64)
        return Bounded(order, indptr, items, np.ones(items.size, dtype=np.int32)), vocab

    def histogram(self, mech, key: bytes) -> tuple[list[str], np.ndarray]:
        spec = self._spec(mech)
        if mech.weight_kind is not None:
            return self.spread_sums(key, spec, mech.weight_kind)
        bounded, vocab = self.stream_bounded(key, spec)
        weights = mech._weights(bounded, len(vocab))
        cand = mech._candidates(bounded, weights)
        strings = vocab.strings
        return [strings[i] for i in cand.tolist()], weights[cand]

    def holder_counts(self, names: list[str]) -> np.ndarray:
        wanted = set(names)

        def part_counts(part):
            c: dict = {}
            for _, counts in part:
                for w in counts:
                    if w in wanted:
                        c[w] = c.get(w, 0.0) + 1.0
            return [c]

        total = self.bag.map_partitions(part_counts).reduction(_add_dicts, _add_dicts).compute()
        return np.array([total.get(w, 0.0) for w in names])

    def __repr__(self) -> str:
        return "<DaskUserItems (private data on the cluster)>"


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
        if sequences:
            raise ParameterError("run.backend", "dask", "a set-union mechanism",
                                 "DPNE runs on the local backend in this version.")
        if not isinstance(reader, JsonlReader):
            raise ParameterError("corpus reader", type(reader).__name__,
                                 "dp_vocab.jsonl.v1 on the dask backend")
        files = [str(reader.path)]
        args = {"user_field": reader.user_field, "text_field": reader.text_field,
                "on_error": reader.on_error, "max_line_bytes": reader.max_line_bytes}
        docs = db.from_sequence(files, npartitions=len(files)).map(_read_file, args).flatten()
        n_parts = max(4 * self.n_workers, len(files))
        per_user = docs.repartition(npartitions=n_parts) \
            .map_partitions(_tokenize, extractor) \
            .foldby(lambda kv: kv[0], lambda acc, kv: _merge(acc, kv[1]), Counter(),
                    _merge, Counter())
        # items: (user, Counter of items) per user, grouped across partitions and files
        from distributed import wait
        persisted = per_user.persist()
        wait(persisted)
        return DaskUserItems(persisted, self.client)

    def describe(self) -> dict:
        return {"backend": "dask",
                "scheduler": self.scheduler_address or f"LocalCluster({self.n_workers} workers)"}

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


__all__ = ["DaskBackend", "DaskUserItems", "bound_user"]
