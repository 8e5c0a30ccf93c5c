"""Item strings ↔ dense ids, and the public item hash that tells items apart everywhere
(bounding, candidate order, public-list lookups)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ..bounding import fingerprints, string_ties


# Items are told apart by this hash in bounding, candidate order and public-list lookups; a new
# hash function needs a new name (cached public lists are keyed by it).
ITEM_HASH = "siphash-2-4 of the tagged UTF-8 bytes, public key v1"
_ITEM_KEY = b"dp-vocab: the public item hash, v1"


def item_hashes(strings, encoded: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The unkeyed 64-bit hash of each item (SipHash-2-4 under a fixed, public key of its
    UTF-8 bytes), as uint64, in compiled code over all items at once. ``encoded``:
    ``bounding.encode_user_ids(strings)``, when the caller has it already."""
    strings = strings if isinstance(strings, list) else list(strings)
    return fingerprints(strings, _ITEM_KEY, encoded)


class Vocabulary:
    """A bijection between item strings and dense ids 0..n-1, in first-seen order (built by
    ``data.builder.Interner``; read-only after)."""

    __slots__ = ("_strings", "_index", "_hashes", "_ties")

    def __init__(self, strings: Iterable[str] = ()):
        self._strings: list[str] = list(dict.fromkeys(strings))   # distinct, first-seen order
        self._index: dict[str, int] | None = None
        self._hashes: np.ndarray | None = None
        self._ties: np.ndarray | None = None

    @classmethod
    def from_index(cls, index: dict[str, int], hashes: np.ndarray | None = None) -> "Vocabulary":
        """Adopt ``{string: id}`` with ids 0..n-1 in insertion order (no copy), and the
        strings' ``item_hashes`` when they are known already."""
        vocab = cls.from_strings(list(index), hashes)
        vocab._index = index
        return vocab

    @classmethod
    def from_strings(cls, strings: list[str], hashes: np.ndarray | None = None) -> "Vocabulary":
        """Adopt distinct ``strings`` as ids 0..n-1 (no copy), and their ``item_hashes``
        when known. The string → id index is built on the first lookup: a run that only
        reads ids' strings (extraction, then a release) never builds it."""
        vocab = cls()
        vocab._strings = strings
        vocab._index = None
        vocab._hashes = hashes
        return vocab

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = dict(zip(self._strings, range(len(self._strings))))
        return self._index

    def __len__(self) -> int:
        return len(self._strings)

    def __getitem__(self, i: int) -> str:
        return self._strings[i]

    def __contains__(self, item: object) -> bool:
        return item in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings)

    def id(self, item: str) -> int:
        return self.index[item]

    def get(self, item: str, default: int | None = None) -> int | None:
        return self.index.get(item, default)

    @property
    def strings(self) -> list[str]:
        return self._strings

    def strings_at(self, ids: np.ndarray) -> list[str]:
        """The strings of item ids ``ids`` (int array), in that order."""
        strings = self._strings
        return [strings[i] for i in np.asarray(ids).tolist()]

    def hashes(self) -> np.ndarray:
        """An unkeyed 64-bit hash of each item's UTF-8 bytes (uint64, by id).

        Bounding mixes it with the user's keyed seed, so a user's sample depends only on the key,
        the user id and the item strings, never on interning order (which depends on other users).
        """
        if self._hashes is None or len(self._hashes) != len(self._strings):
            self._hashes = item_hashes(self._strings)
        return self._hashes

    def ties(self) -> np.ndarray:
        """Tie-breaks for items sharing a hash (``bounding.string_ties``), cached."""
        if self._ties is None:
            self._ties = string_ties(self._strings, self.hashes())
        return self._ties
