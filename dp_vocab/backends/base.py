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


class Backend(ABC):
    """One implementation: ``from_run`` builds it from a recipe's checked ``[run]`` section;
    ``load`` reads the corpus into user data where it lives; ``describe`` says where (for
    privacy.json); ``close`` releases what ``from_run`` started."""

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_run(cls, run: dict) -> "Backend":
        ...

    @abstractmethod
    def load(self, reader: Any, extractor: Any, sequences: bool = False,
             progress: Callable | None = None) -> ItemSetData | SequenceData:
        """The corpus of ``reader`` as user data: token corpora if ``sequences``, else item
        sets. ``progress(reader)`` is called while it is read, where the backend can."""

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
