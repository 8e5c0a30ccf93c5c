"""Modules of compiled kernels (numba), imported when a kernel is first used.

Importing numba and loading its first kernel take a noticeable while (numba loads its typing
and lowering registries, scipy.linalg among them), all holding the GIL. A run
starts reading its corpus on background threads first and loads the kernels while the first
batch of documents is read and tokenized (``ingest.extract._columnar_itemsets``), so nothing that
runs before (imports, the recipe's plan) may import numba: the kernel modules are reached
through ``lazy_module``. ``tests/test_architecture.py`` checks that a plan leaves numba
unimported.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for the module ``name`` and imports it at the first attribute read (any thread:
    the import system's module locks make one import, the others wait for it)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(self.module(), attr)

    def module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> LazyModule:
    """The module ``name`` (absolute), imported on first use."""
    return LazyModule(name)


# the modules of compiled kernels (numba ``cache=True``), relative to the package
KERNEL_MODULES = ("bounding/_kernels.py", "bounding/_siphash.py", "mechanisms/_kernels.py",
                  "bounding/_ngram_kernels.py")
# those every run compiles; the n-gram kernels only an n-gram run (dpne), so an installation
# that never runs one never caches them
EVERY_RUN = KERNEL_MODULES[:3]


def kernels_cached(modules: tuple[str, ...] = KERNEL_MODULES) -> bool:
    """Whether numba's cache holds compiled code of each of ``modules``, looked up where numba
    writes it (``$NUMBA_CACHE_DIR``, else ``__pycache__`` beside the module, else the
    user-wide ``~/.cache/numba``) without importing numba: a first run compiles them, and the
    command line says so while it waits (checking ``EVERY_RUN``)."""
    import os
    from pathlib import Path
    root = Path(__file__).resolve().parent
    custom = os.environ.get("NUMBA_CACHE_DIR")
    user_wide = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    for rel in modules:
        source = root / rel
        stem = source.stem
        if custom:
            places = [Path(custom)]
        else:
            places = [source.parent / "__pycache__", user_wide]
        if not any(place.is_dir() and next(place.rglob(f"{stem}.*.nbi"), None) is not None
                   for place in places):
            return False
    return True
