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
from ..itemsets import item_hashes
from ..mechanisms.base import MISSING_RANK, Bounded
from ..mechanisms.user_order import user_digest

from ..mechanisms._kernels import _M1, _M2, _M3  # the same mix as bound_rows


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
    mixed = _splitmix64(item_hashes(items))
    rand = mixed if ordered else _splitmix64(np.uint64(seed) ^ mixed)
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


def _cap_distinct(c: Counter, cap: int | None) -> Counter:
    """A user's items capped to the ``cap`` smallest item hashes, as ``ItemSetsBuilder`` does.
    Capping partial counters is exact: an item among the user's ``cap`` smallest hashes is
    among the smallest of every part that holds it, so it is never dropped and its count is
    whole."""
    if cap is None or len(c) <= cap:
        return c
    items = list(c)
    keep = np.argsort(item_hashes(items), kind="stable")[:cap]
    return Counter({items[i]: c[items[i]] for i in keep.tolist()})


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


def _bounded_partition(part, key, spec):
    """Per user: 3 order words (the 24-byte keyed-hash order key), kept-item count, kept-item
    hashes in priority order. Arrays only: no strings leave the worker."""
    max_items, mode, ordered, ranks = spec
    words, lengths, hashes = [], [], []
    for user, counts in part:
        order_key, seed = user_digest(user, key)
        items = list(counts)
        kept = bound_user(items, [counts[w] for w in items], seed, max_items, mode, ordered, ranks)
        words.append(order_key)
        lengths.append(len(kept))
        hashes.append(item_hashes(kept))
    return [(np.frombuffer(b"".join(words), dtype=">u8").reshape(-1, 3).astype(np.uint64),
             np.asarray(lengths, dtype=np.int64),
             np.concatenate(hashes) if hashes else np.zeros(0, np.uint64))]


def _strings_partition(part, wanted):
    found = {}
    for _, counts in part:
        for w in counts:
            if w not in found:
                h = int(item_hashes([w])[0])
                if h in wanted:
                    found[w] = h
    return [{h: w for w, h in found.items()}]


def _merge_maps(parts):
    out: dict = {}
    for d in parts:
        out.update(d)
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


def _runs(docs, extractor):
    per_user: dict = {}
    for user, text in docs:
        per_user.setdefault(user, []).extend(extractor.runs(text))
    return list(per_user.items())


def _level_partition(part, n, prev, key, max_items, mode, joiner):
    """DPNE level n on one partition: each user's candidate n-grams (token tuples whose prefix
    and suffix are released (n−1)-grams), capped to Δ0, weight 1/√k each; summed per n-gram."""
    join = joiner.join
    sums: dict = {}
    for user, runs in part:
        c: Counter = Counter()
        for run in runs:
            if n == 1:
                c.update((t,) for t in run)
                continue
            for i in range(len(run) - n + 1):
                g = tuple(run[i:i + n])
                if g[:-1] in prev and g[1:] in prev:
                    c[g] += 1
        if not c:
            continue
        _, seed = user_digest(user, key)
        grams = list(c)
        names = [join(g) for g in grams]   # hashed as the local backend hashes them
        kept = bound_user(names, [c[g] for g in grams], seed, max_items, mode, False, None)
        add = len(kept) ** -0.5
        gram_of = dict(zip(names, grams))
        for w in kept:
            g = gram_of[w]
            sums[g] = sums.get(g, 0.0) + add
    return [sums]


class _DaskLevels:
    """DPNE levels on the cluster: the released (n−1)-grams are broadcast, sums come back."""

    def __init__(self, data: "DaskSequences", mech):
        self.data, self.mech, self.joiner = data, mech, data.joiner
        self.prev: frozenset = frozenset()

    def level_weights(self, n: int, key: bytes):
        mode = 0 if self.mech.sampling == "uniform" else 1
        total = self.data.bag.map_partitions(
            _level_partition, n, self.prev, key, self.mech.max_items_per_user, mode,
            self.joiner).reduction(_add_dicts, _add_dicts).compute()
        grams = list(total)
        return grams, np.fromiter((total[g] for g in grams), dtype=np.float64, count=len(grams))

    def set_released(self, n: int, grams: list[tuple]) -> None:
        self.prev = frozenset(grams)

    set_released_grams = set_released


class DaskSequences:
    """Per-user token runs persisted on the cluster: a bag of (user id, [token lists])."""

    def __init__(self, bag, client, joiner: str):
        self.bag, self.client, self.joiner = bag, client, joiner

    def dpne_levels(self, mech) -> _DaskLevels:
        return _DaskLevels(self, mech)

    def __repr__(self) -> str:
        return "<DaskSequences (private data on the cluster)>"


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
        """Every user's bounded items in keyed-hash order, as a CSR over item hashes.

        Partitions are computed in parallel and streamed to the driver as they finish; each
        brings order keys and item hashes (numbers, no text)."""
        from distributed import as_completed
        futures = self.client.compute(
            self.bag.map_partitions(_bounded_partition, key, spec).to_delayed())
        words, lengths, hashes = [], [], []
        for fut in as_completed(futures):
            for w, n, h in fut.result():
                words.append(w)
                lengths.append(n)
                hashes.append(h)
            fut.release()
        words = np.concatenate(words) if words else np.zeros((0, 3), np.uint64)
        lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        hashes = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
        order = np.lexsort((words[:, 2], words[:, 1], words[:, 0]))
        starts = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        new_len = lengths[order]
        indptr = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(new_len, out=indptr[1:])
        take = np.repeat(starts[:-1][order] - indptr[:-1], new_len) + np.arange(indptr[-1])
        uniq, ids = np.unique(hashes[take], return_inverse=True)
        bounded = Bounded(np.arange(lengths.size, dtype=np.int64), indptr,
                          ids.astype(np.int32), np.ones(ids.size, dtype=np.int32))
        return bounded, uniq   # bounded: ids into uniq (item hashes), rows in keyed order

    def strings_of(self, hashes: np.ndarray) -> list[str]:
        wanted = set(hashes.tolist())
        found = self.bag.map_partitions(_strings_partition, wanted) \
            .reduction(_merge_maps, _merge_maps).compute()
        return [found[h] for h in hashes.tolist()]

    def histogram(self, mech, key: bytes) -> tuple[list[str], np.ndarray]:
        spec = self._spec(mech)
        if mech.weight_kind is not None:
            return self.spread_sums(key, spec, mech.weight_kind)
        bounded, hashes = self.stream_bounded(key, spec)
        weights = mech._weights(bounded, hashes.size)
        cand = mech._candidates(bounded, weights)
        return self.strings_of(hashes[cand]), weights[cand]

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
            persisted = per_user.persist()
            wait(persisted)
            return DaskSequences(persisted, self.client, extractor.joiner)
        merge = _merger(getattr(extractor, "max_distinct_per_user", None))
        per_user = docs.map_partitions(_tokenize, extractor) \
            .foldby(lambda kv: kv[0], lambda acc, kv: merge(acc, kv[1]), Counter(),
                    merge, Counter())
        # items: (user, Counter of items) per user, grouped across partitions and files
        persisted = per_user.persist()
        wait(persisted)
        return DaskUserItems(persisted, self.client)

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


__all__ = ["DaskBackend", "DaskUserItems", "bound_user"]
