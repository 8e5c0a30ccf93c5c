"""Stage 1 of a run: corpus reader → item extractor → ItemSets (private, in memory)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from .itemsets import ItemSets, ItemSetsBuilder


def extract_itemsets(documents: Iterable[tuple[object, str]], extractor: Callable[[str], list[str]],
                     on_progress: Callable[[], None] | None = None,
                     progress_every: int = 2000) -> ItemSets:
    """Tokenize and intern every document; a user's documents may be spread over the input."""
    builder = ItemSetsBuilder()
    add = builder.add_counts
    for n, (user, text) in enumerate(documents, 1):
        add(user, Counter(extractor(text)))
        if on_progress is not None and n % progress_every == 0:
            on_progress()
    if on_progress is not None:
        on_progress()
    return builder.build()  # items: int32 ids, CSR by user, with the user's own counts
