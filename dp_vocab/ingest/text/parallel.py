"""The Python extractor on every core: spaCy, Hugging Face pre-tokenizers, any callable.

Documents go to a pool of worker processes in batches and the results come back in input order,
so the items (and their first-seen order) are exactly the serial ones. A small corpus, one core,
an extractor that cannot be sent to another process (a lambda), a process that may not start
one (a Dask worker: a daemonic process has no children), or a script that starts the run from
its top level outside ``if __name__ == "__main__":`` (each worker would run it again) stays
serial. In-flight batches are bounded, so memory does not grow with the corpus.
"""

from __future__ import annotations

import ast
import os
import pickle
import sys
import warnings
from collections.abc import Iterable, Iterator
from itertools import islice
from types import FrameType
from typing import Any

BATCH = 500              # documents per task
SERIAL_FIRST = 2_000     # a corpus this small never starts a pool (starting workers costs more)

_worker_extractor: Any = None


def _init(extractor_bytes: bytes) -> None:
    global _worker_extractor
    _worker_extractor = pickle.loads(extractor_bytes)


def _items(texts: list[str]) -> list[list[str]]:
    return [_worker_extractor(t) for t in texts]


def _runs(texts: list[str]) -> list[list[list[str]]]:
    return [_worker_extractor.runs(t) for t in texts]


def workers() -> int:
    """The processes a pool may use here: 1 (serial) inside a daemonic process, such as a Dask
    worker, which multiprocessing refuses to let start children."""
    import multiprocessing as mp
    if mp.current_process().daemon:
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def main_reimport_is_safe() -> bool:
    """Whether worker processes may import the main script again, as multiprocessing's
    forkserver workers do: not when this call comes from the script's top-level code outside an
    ``if __name__ == "__main__":`` block, which every worker would run again (starting the run
    in each, which multiprocessing refuses). Interactive sessions, ``python -c``, notebooks and
    console scripts have no such code."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None:
        return True
    frame: FrameType | None = sys._getframe()
    while frame is not None and not (frame.f_code.co_name == "<module>"
                                     and frame.f_globals is vars(main)):
        frame = frame.f_back
    if frame is None:
        return True
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return False
    line = frame.f_lineno
    for node in tree.body:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)
    return False


def parallel_items(documents: Iterable[tuple[object, str]], extractor) -> Iterator[tuple]:
    """(user, items of the document) for each document, in order. Serial items are produced
    lazily (``iter_items``), so a huge document's n-grams are never all in memory."""
    serial = getattr(extractor, "iter_items", extractor)
    yield from _map(documents, extractor, serial, _items)


def parallel_runs(documents: Iterable[tuple[object, str]], extractor) -> Iterator[tuple]:
    """(user, runs of the document) for each document, in order."""
    yield from _map(documents, extractor, extractor.runs, _runs)


def _map(documents, extractor, serial, remote) -> Iterator[tuple]:
    it = iter(documents)
    head = list(islice(it, SERIAL_FIRST))
    for user, text in head:
        yield user, serial(text)
    n_workers = workers()
    if len(head) < SERIAL_FIRST or n_workers < 2:
        for user, text in it:
            yield user, serial(text)
        return
    try:
        payload = pickle.dumps(extractor)
    except (pickle.PicklingError, TypeError, AttributeError):
        for user, text in it:
            yield user, serial(text)
        return
    if not main_reimport_is_safe():
        warnings.warn("dp-vocab extracts items on one core: this script starts the run from its "
                      "top level. Put that code under `if __name__ == \"__main__\":` to use "
                      f"all {n_workers} cores (worker processes import the script again).",
                      stacklevel=2)
        for user, text in it:
            yield user, serial(text)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from collections import deque
    with ProcessPoolExecutor(n_workers, mp_context=mp.get_context("forkserver"),
                             initializer=_init, initargs=(payload,)) as pool:
        pending: deque = deque()
        while True:
            batch = list(islice(it, BATCH))
            if batch:
                users = [u for u, _ in batch]
                pending.append((users, pool.submit(remote, [t for _, t in batch])))
            while pending and (not batch or len(pending) >= 2 * n_workers):
                users, fut = pending.popleft()
                yield from zip(users, fut.result())
            if not batch:
                return
