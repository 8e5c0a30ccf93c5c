"""Where a run's data lives and its per-user work happens: ``local`` (default) or ``dask``.

Every backend is a ``base.Backend``, found by name in ``BACKENDS``: ``load(reader, extractor,
sequences)`` returns what mechanisms consume — ``ItemSets`` / ``TokenCorpus`` in memory for
local, ``DaskItemSets`` / ``DaskSequences`` (one partition per worker thread, on the cluster)
for Dask — and both answer the same ``bounding.UserData`` questions with the same code.
"""

from __future__ import annotations

from ..errors import ParameterError
from .base import BACKENDS, Backend, register_backend
from .local import LocalBackend   # registered first: the default, first in messages
from .dask import DaskBackend  # noqa: I001
from .settings import check_run


def make_backend(run: dict) -> Backend:
    """The backend ``run.backend`` names (``local`` when absent), its settings checked."""
    name = run.get("backend", "local")
    backend = BACKENDS.get(name) if isinstance(name, str) else None
    if backend is None:
        raise ParameterError("run.backend", name,
                             "one of " + ", ".join(repr(b) for b in BACKENDS))
    check_run(run)
    return backend.from_run(run)


__all__ = ["BACKENDS", "Backend", "DaskBackend", "LocalBackend", "check_run", "make_backend",
           "register_backend"]
