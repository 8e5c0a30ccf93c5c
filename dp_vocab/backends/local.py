"""The local backend: user data in this process's memory (``ItemSets``, ``TokenCorpus``), read
by the one extraction path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..bounding import ItemSetData, SequenceData
from .base import Backend, register_backend


@register_backend
class LocalBackend(Backend):
    name = "local"

    @classmethod
    def from_run(cls, run: dict) -> "LocalBackend":
        return cls()

    def _load(self, reader: Any, extractor: Any, sequences: bool,
              progress: Callable | None) -> tuple[ItemSetData | SequenceData, int]:
        from ..ingest.extract import extract_itemsets, extract_sequences
        extract = extract_sequences if sequences else extract_itemsets
        data = extract(reader, extractor,
                       on_progress=(lambda: progress(reader)) if progress else None)
        return data, data.n_users

    def describe(self) -> dict:
        return {"backend": "local"}


__all__ = ["LocalBackend"]
