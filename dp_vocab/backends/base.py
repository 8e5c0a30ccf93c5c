"""What every backend is: where a run's user data lives and its per-user work happens.

A backend loads user data from a reader and an extractor, into the form the run's mechanism
reads: a ``bounding.ItemSetData`` (item sets) or a ``bounding.SequenceData`` (token corpora).
Mechanisms and the ``[counts]`` stage ask that data only the ``bounding.UserData`` questions,
which each implementation answers with the same bounding code. ``BACKENDS`` holds the
implementations by the name a recipe's ``run.backend`` gives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from ..bounding import ItemSetData, SequenceData
from ..ingest.corpora.readers import nothing_read


class Backend(ABC):
    """One implementation: ``from_run`` builds it from a recipe's checked ``[run]`` section;
    ``load`` reads the corpus into user data where it lives (the backend's ``_load``);
    ``describe`` says where (for privacy.json); ``close`` releases what ``from_run``
    started."""

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_run(cls, run: dict) -> "Backend":
        ...

    def load(self, reader: Any, extractor: Any, sequences: bool = False,
             progress: Callable | None = None) -> ItemSetData | SequenceData:
        """The corpus of ``reader`` as user data: token corpora if ``sequences``, else item
        sets. ``progress(reader)`` is called while it is read, where the backend can. A
        corpus that gave no document (every line skipped, or none there) is a CorpusError:
        checked here, once for every backend and reader."""
        data, users = self._load(reader, extractor, sequences, progress)
        if not users:
            raise nothing_read(reader)
        return data

    @abstractmethod
    def _load(self, reader: Any, extractor: Any, sequences: bool,
              progress: Callable | None) -> tuple[ItemSetData | SequenceData, int]:
        """``load``'s user data, and how many users it holds (a backend may count a user once
        per input file): zero exactly when no document was read."""

    @abstractmethod
    def describe(self) -> dict:
        ...

    def close(self) -> None:
        """Nothing to release unless the backend started something."""


BACKENDS: dict[str, type[Backend]] = {}


def register_backend(cls: type[Backend]) -> type[Backend]:
    """Make ``cls`` the backend of ``run.backend = cls.name``."""
    BACKENDS[cls.name] = cls
    return cls
