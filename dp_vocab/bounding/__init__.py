"""Contribution bounding, written once: keyed user order, per-user caps, per-user weights.

Every backend calls these functions on CSR arrays it holds (the whole corpus locally, one
partition on a Dask worker), so the privacy-critical selection exists once. The guarantees the
mechanisms' proofs rely on (mechanisms/README.md):

- a user's place in the processing order is PRF(key, user id): it depends on the key and the
  user's id only, never on who else is present;
- a user's kept items (≤ Δ0, and ≤ ``max_outside`` outside a public list) depend on its own
  items and counts, the key and public item hashes (and a public rank table or list), never on
  other users;
- a user's weights depend on its kept items only.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..compiled import lazy_module
from ..errors import ParameterError
from .user_order import check_key, derive_key, fingerprints, keyed_order, user_keys, user_order

_kernels = lazy_module("dp_vocab.bounding._kernels")   # numba: imported on first use

MISSING_RANK = 2**31 - 1  # items absent from a public priority table rank after all listed ones
# Δ0 above this is never useful (a user's distinct items are capped at extraction, 100,000 by
# default) and the thresholds maximise over t = 1..Δ0 in memory
MAX_ITEMS_PER_USER = 1_000_000


class Input(enum.Enum):
    """The form of user data a mechanism reads (backends load that form)."""

    ITEM_SETS = "itemsets"      # each user's distinct items with own counts
    SEQUENCES = "sequences"     # each user's documents as runs of tokens (level-wise n-grams)


class Priority(enum.IntEnum):
    """Which of a user's items are kept under the cap (lowest priority value first)."""

    RANDOM = 0       # a uniform sample, from the user's keyed seed
    OWN_COUNT = 1    # the user's most frequent items; ties by the user's keyed seed
    PUBLIC_RANK = 2  # public rank first, then own count (GW-KT)


class Weighting(enum.Enum):
    """What each user adds to each of its k kept items."""

    COUNT = 0.0      # +1: L∞ 1, L1 ≤ Δ0, L2 ≤ √Δ0
    L1 = 1.0         # +1/k: L1 mass 1
    L2 = 0.5         # +1/√k: L2 norm 1

    @property
    def power(self) -> float:
        return float(self.value)


class Listed(Protocol):
    """A public list of items (``mechanisms.public_list.PublicDomain``)."""

    def ranks(self, hashes: np.ndarray, names_of: Callable[[np.ndarray], list[str]]
              ) -> np.ndarray:
        """Each item's rank in the list (int64), −1 for items outside it."""
        ...


@dataclass(frozen=True)
class Bounding:
    """How users are capped: ``max_items`` (Δ0), the priority, and whether kept rows must stay
    in priority order (GW fills them in that order). ``public_rank``: item → rank for
    ``Priority.PUBLIC_RANK`` (public data only). ``max_outside``: first, each user keeps at
    most this many of its items outside the public list ``listed`` (its most frequent, ties
    by its keyed seed), and all of its listed ones."""

    max_items: int
    priority: Priority = Priority.RANDOM
    ordered: bool = False
    public_rank: Mapping[str, int] | None = field(default=None, compare=False, repr=False)
    max_outside: int | None = None
    listed: Listed | None = field(default=None, compare=False, repr=False)

    def ranks(self, strings: Sequence[str]) -> np.ndarray:
        if self.public_rank is None:
            return _NO_RANK
        get = self.public_rank.get
        return np.fromiter((get(s, MISSING_RANK) for s in strings), dtype=np.int64,
                           count=len(strings))


_NO_RANK = np.zeros(1, dtype=np.int64)


@dataclass(frozen=True)
class BoundedSets:
    """Per-user capped item sets (CSR, same rows as the input) and the processing order."""

    order: np.ndarray    # int64 row indices, keyed-hash order
    indptr: np.ndarray   # int64
    items: np.ndarray    # int32 item ids, priority order within a row when ``ordered``
    counts: np.ndarray   # int32, the user's own frequency of each kept item
    # every item id's rank in ``Bounding.listed`` (−1 outside), when the caps looked it up
    listed_ranks: np.ndarray | None = None


def string_ties(strings: Sequence[str], hashes: np.ndarray) -> np.ndarray:
    """Tie-breaks for items that share a 64-bit hash: each item's rank in string order (the
    relative order of two items is that of their strings, whoever else is present). Length 1
    when all hashes differ, the usual case: then no two items can tie."""
    ranked = np.sort(hashes)
    if not (ranked[1:] == ranked[:-1]).any():
        return _NO_TIE
    ranks = np.empty(len(strings), dtype=np.int64)
    ranks[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    return ranks


_NO_TIE = np.zeros(1, dtype=np.int64)


def bound_sets(indptr: np.ndarray, items: np.ndarray, counts: np.ndarray,
          strings: Sequence[str], hashes: np.ndarray, ties: np.ndarray,
          keys: tuple[np.ndarray, np.ndarray], bounding: Bounding) -> BoundedSets:
    """Keyed user order and per-user caps (``_kernels.bound_rows`` documents the priorities);
    ``ties`` from ``string_ties``, ``keys`` the users' (order words, seeds) from ``user_keys``."""
    words, seeds = keys
    order = keyed_order(words)
    listed_ranks = None
    if bounding.max_outside is not None:
        if bounding.listed is None:
            raise ValueError("Bounding.max_outside needs the list (Bounding.listed)")
        listed_ranks = bounding.listed.ranks(
            hashes, lambda ids: [strings[i] for i in ids.tolist()])
        indptr, items, counts = _kernels.cap_outside(
            indptr, items, counts, seeds, hashes, ties, (listed_ranks < 0).view(np.uint8),
            bounding.max_outside)
        # items, counts: ≤ max_outside per row outside the list, rows in input order
    out_ptr, kept, kept_counts = _kernels.bound_rows(
        indptr, items, counts, seeds, hashes, ties, bounding.ranks(strings), bounding.max_items,
        int(bounding.priority), bounding.ordered)
    return BoundedSets(order, out_ptr, kept, kept_counts, listed_ranks)
    # bounded: int32 ids and own counts, CSR by user, ≤ Δ0 per row


def user_weights(bounded: BoundedSets, n_items: int, weighting: Weighting) -> np.ndarray:
    """Σ over users of the weighting's contribution to each item id (float64, n_items)."""
    lengths = np.diff(bounded.indptr)
    if weighting is Weighting.COUNT:
        return np.bincount(bounded.items, minlength=n_items).astype(np.float64)
    per_row = np.zeros(lengths.size, dtype=np.float64)
    nz = lengths > 0
    per_row[nz] = lengths[nz].astype(np.float64) ** -weighting.power
    return np.bincount(bounded.items, weights=np.repeat(per_row, lengths), minlength=n_items)


def canonical_order(hashes: np.ndarray) -> np.ndarray:
    """The stable sort of ``hashes`` (uint64). Distinct hashes, the usual case, have one sorted
    order, which numpy's default (unstable) sort finds faster than its stable one."""
    order = np.argsort(hashes)
    ranked = hashes[order]
    if ranked.size > 1 and (ranked[1:] == ranked[:-1]).any():
        order = np.argsort(hashes, kind="stable")
    return order


class NamesOf(Sequence[str]):
    """The strings of item ids ``ids``, fetched by ``names_of`` only when read: a release needs
    the names of the items it releases, not of every candidate (every candidate's name, in hash
    order, would be scattered reads over the whole string table)."""

    def __init__(self, names_of: Callable[[np.ndarray], list[str]], ids: np.ndarray):
        self._names_of = names_of
        self._ids = np.asarray(ids, dtype=np.int64)
        self._all: list[str] | None = None

    def __len__(self) -> int:
        return self._ids.size

    def __getitem__(self, i):   # type: ignore[override]
        at = range(len(self))[i]   # a range for a slice, an index (IndexError past the end)
        if isinstance(at, range):
            return self.take(np.asarray(at, dtype=np.int64))
        return self.take(np.array([at]))[0]

    def __iter__(self):
        if self._all is None:
            self._all = self._names_of(self._ids)
        return iter(self._all)

    def take(self, positions: np.ndarray) -> list[str]:
        """The names at ``positions`` (int array), in that order."""
        if self._all is not None:
            return [self._all[i] for i in np.asarray(positions).tolist()]
        return self._names_of(self._ids[positions]) if len(positions) else []

    def reordered(self, order: np.ndarray) -> "NamesOf":
        return NamesOf(self._names_of, self._ids[order])


@dataclass(frozen=True)
class ItemWeights:
    """Items with their summed weights (candidates of a release), in no particular order.
    ``names`` may be a ``NamesOf``, read only where needed (``names_at``)."""

    names: Sequence[str]
    hashes: np.ndarray   # uint64 public item hashes of ``names``
    weights: np.ndarray  # float64

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The names at ``positions`` (int array), in that order."""
        if isinstance(self.names, NamesOf):
            return self.names.take(positions)
        return [self.names[i] for i in np.asarray(positions).tolist()]

    def canonical(self) -> "ItemWeights":
        """Sorted by item hash: the same order on every backend, so that a seeded run draws
        the same decisions for the same items everywhere."""
        order = canonical_order(self.hashes)
        names = self.names.reordered(order) if isinstance(self.names, NamesOf) \
            else [self.names[i] for i in order.tolist()]
        return ItemWeights(names, self.hashes[order],
                           np.asarray(self.weights, dtype=np.float64)[order])


@dataclass(frozen=True)
class BoundedRows:
    """All users' bounded rows; item ids index ``hashes``, and ``names_of(ids)`` gives their
    strings (fetched from where the data lives, for the candidates only)."""

    bounded: BoundedSets
    hashes: np.ndarray
    names_of: Callable[[np.ndarray], list[str]]
    order_words: np.ndarray | None = None   # (n_users, 3) uint64: merge rows held apart

    @property
    def n_items(self) -> int:
        return len(self.hashes)


class NgramCandidates(Protocol):
    """A level's n-grams (token tuples) as int64 keys with their item hashes, made into
    tuples only when read (``data.token_levels.LevelGrams``)."""

    keys: np.ndarray

    @property
    def hashes(self) -> np.ndarray: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[tuple[str, ...]]: ...

    def take(self, positions: np.ndarray) -> list[tuple[str, ...]]:
        """The n-grams at ``positions``, in that order."""
        ...

    def subset(self, positions: np.ndarray) -> "NgramCandidates":
        """The candidates at ``positions``, in that order."""
        ...

    def sorted_keys(self) -> np.ndarray: ...


class NgramLevels(Protocol):
    """Level-wise n-gram weights (DPNE): n-grams are token tuples."""

    joiner: str

    def level_weights(self, n: int, key: bytes, bounding: "Bounding | None" = None
                      ) -> tuple[NgramCandidates, np.ndarray]:
        """Level n's n-grams with positive weight and their weights (1/√k each over ≤ Δ0 per
        user), given the released (n−1)-grams set before; ``bounding`` overrides the levels'
        cap for this level."""
        ...

    def level_rows(self, n: int, key: bytes, bounding: "Bounding | None" = None
                   ) -> tuple[NgramCandidates, BoundedSets]:
        """Level n's candidates held by some user, and all users' bounded rows of them in
        keyed order (item ids index the list): for sequential policies over a level."""
        ...

    def level_chunks(self, n: int, key: bytes, bounding: "Bounding | None" = None
                     ) -> tuple[NgramCandidates, Iterator[BoundedSets]]:
        """``level_rows`` a chunk of users at a time, the chunks and the users in each
        (``order``) in keyed order: for sequential policies without all rows at once."""
        ...

    def set_released(self, n: int, grams: list[tuple[str, ...]]) -> None:
        """The released level-n n-grams (sorted), members of the level last weighed."""
        ...


# A row's sum of squared integer counts is exact in float64 below this (every partial sum an
# integer under 2**53): what the floor's margin in ``normalised_contributions`` relies on.
EXACT_SQUARES = 2 ** 53


def normalised_contributions(counts: np.ndarray, indptr: np.ndarray, scale: int) -> np.ndarray:
    """⌊S·a/‖a‖₂⌋ per row of the CSR ``indptr`` (a = ``counts``, non-negative integers, each
    row's Σa² below ``EXACT_SQUARES``): integers whose row has L2 norm ≤ S. The quotient is
    shrunk by 2⁻⁴⁰ before the floor so that its floating-point rounding (relative error
    < 2⁻⁵⁰ once Σa² is exact) can never lift a cell to the next integer."""
    a = np.asarray(counts, dtype=np.float64)
    if a.size and float(a.max()) ** 2 * int(np.diff(indptr).max()) >= EXACT_SQUARES:
        raise ValueError("normalised_contributions: max(a)² × the longest row must be below "
                         "2**53 (the callers' max_count and max_items_per_user bound it)")
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    norms = np.sqrt(np.bincount(rows, weights=a * a, minlength=indptr.size - 1))
    safe = np.where(norms > 0, norms, 1.0)
    return np.floor(scale * a / safe[rows] * (1.0 - 2.0 ** -40))


class UserData(ABC):
    """What mechanisms need from user data, wherever it lives (memory, a Dask cluster).

    Mechanisms call only these methods. Every backend's data is an ``ItemSetData`` (it answers
    the item-set questions) or a ``SequenceData`` (it answers ``ngram_levels``); asked the
    other half, it says which input that needs. Each answers with the functions of this
    module, so bounding is the same everywhere. Private: the results are pre-noise.
    """

    __slots__ = ()

    def bounded_rows(self, key: bytes, bounding: Bounding) -> BoundedRows:
        """Every user's bounded row, for sequential policies."""
        raise needs_item_sets()

    def weight_sums(self, key: bytes, bounding: Bounding, weighting: Weighting,
                    exclude: frozenset[str] = frozenset()) -> ItemWeights:
        """Per-item sums of the users' weights over their bounded rows (items in ``exclude``
        removed before bounding); items with positive weight only."""
        raise needs_item_sets()

    def holder_counts(self, items: Sequence[str]) -> np.ndarray:
        """How many users hold each of ``items`` (float64)."""
        raise needs_item_sets()

    def clipped_count_sums(self, items: Sequence[str], key: bytes, bounding: Bounding,
                           max_count: int, l2_scale: int | None = None) -> np.ndarray:
        """Per-item sums (int64, aligned with ``items``) of each user's own count clipped to
        ``max_count``, over the user's items among ``items`` bounded by ``bounding``: the
        separate count release over a released vocabulary (0 for an item nobody holds). With
        ``l2_scale`` S, each user's clipped counts a are replaced by ⌊S·a/‖a‖₂⌋ (integers,
        L2 norm ≤ S; ``normalised_contributions``)."""
        raise needs_item_sets()

    def ngram_levels(self, bounding: Bounding) -> NgramLevels:
        """Level-wise n-gram weights over token sequences."""
        raise needs_sequences()


class ItemSetData(UserData):
    """User data held as each user's distinct items with own counts (``Input.ITEM_SETS``):
    every backend's item sets answer these four questions."""

    __slots__ = ()

    @abstractmethod
    def bounded_rows(self, key: bytes, bounding: Bounding) -> BoundedRows:
        ...

    @abstractmethod
    def weight_sums(self, key: bytes, bounding: Bounding, weighting: Weighting,
                    exclude: frozenset[str] = frozenset()) -> ItemWeights:
        ...

    @abstractmethod
    def holder_counts(self, items: Sequence[str]) -> np.ndarray:
        ...

    @abstractmethod
    def clipped_count_sums(self, items: Sequence[str], key: bytes, bounding: Bounding,
                           max_count: int, l2_scale: int | None = None) -> np.ndarray:
        ...


class SequenceData(UserData):
    """User data held as each user's documents as runs of tokens (``Input.SEQUENCES``): every
    backend's token corpora answer ``ngram_levels``."""

    __slots__ = ()

    @abstractmethod
    def ngram_levels(self, bounding: Bounding) -> NgramLevels:
        ...


def needs_sequences() -> ParameterError:
    """The error for a level-wise n-gram mechanism given item sets."""
    return ParameterError("mechanism input", "item sets",
                          "token sequences (a level-wise n-gram mechanism reads each document "
                          "as runs of tokens)", "Run it through a recipe, or build its input "
                          "with dp_vocab.ingest.extract.extract_sequences(documents, extractor) "
                          "from (user, text) pairs.")


def needs_item_sets() -> ParameterError:
    """The error for an item-set mechanism given token sequences."""
    return ParameterError("mechanism input", "token sequences",
                          "item sets (this mechanism counts each user's distinct items)",
                          "Run it through a recipe, or build its input with "
                          "dp_vocab.itemsets_from_frame(frame) or "
                          "dp_vocab.ingest.extract.extract_itemsets(documents, extractor).")


__all__ = ["BoundedSets", "EXACT_SQUARES", "normalised_contributions", "BoundedRows", "Bounding", "Input", "ItemSetData", "ItemWeights", "Listed", "NamesOf",
           "MAX_ITEMS_PER_USER",
           "MISSING_RANK", "NgramCandidates", "NgramLevels", "needs_item_sets", "needs_sequences",
           "Priority", "SequenceData", "UserData", "Weighting", "bound_sets", "canonical_order", "check_key",
           "string_ties", "derive_key", "fingerprints", "keyed_order", "user_keys", "user_order",
           "user_weights"]
