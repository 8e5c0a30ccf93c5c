"""Modules of compiled kernels (numba), imported when a kernel is first used.

Importing numba takes ~0.2 s of one thread, and its first kernel another ~0.3 s (numba loads
its typing and lowering registries, scipy.linalg among them), all holding the GIL. A run
starts reading its corpus on background threads first and loads the kernels while the first
batch of documents is read and tokenized (``extraction._columnar_itemsets``), so nothing that
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
