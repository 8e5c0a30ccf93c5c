"""Where a run's data lives and its per-user work happens: ``local`` (default) or ``dask``.

The interface is small: ``load(reader, extractor, sequences)`` returns what mechanisms consume —
``ItemSets`` in memory for local, a ``DaskUserItems`` (per-user item counts persisted on the
cluster) for Dask, which mechanisms query with ``histogram(mechanism, key)``.
"""

from __future__ import annotations

from ..errors import ParameterError

BACKENDS = ("local", "dask")


class LocalBackend:
    name = "local"

    def load(self, reader, extractor, sequences: bool = False, progress=None):
        from ..extraction import extract_itemsets, extract_sequences
        extract = extract_sequences if sequences else extract_itemsets
        return extract(reader, extractor,
                       on_progress=(lambda: progress(reader)) if progress else None)

    def describe(self) -> dict:
        return {"backend": "local"}

    def close(self) -> None:
        pass


def make_backend(run: dict):
    name = run.get("backend", "local")
    if name == "local":
        return LocalBackend()
    if name == "dask":
        from .dask import DaskBackend
        return DaskBackend(scheduler_address=run.get("scheduler_address"),
                           n_workers=run.get("n_workers", 2))
    raise ParameterError("run.backend", name, "one of " + ", ".join(repr(b) for b in BACKENDS))
