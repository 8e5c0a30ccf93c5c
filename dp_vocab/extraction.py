"""Stage 1 of a run: corpus reader → item extractor → ItemSets (private, in memory)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .itemsets import ItemSets, ItemSetsBuilder
from .sequences import TokenCorpus


def extract_itemsets(documents: Iterable[tuple[object, str]], extractor: Callable[[str], list[str]],
                     on_progress: Callable[[], None] | None = None,
                     progress_every: int = 2000) -> ItemSets:
    """Tokenize and intern every document; a user's documents may be spread over the input.

    With ``extractor.max_distinct_per_user``, memory per user stays bounded while its documents
    stream in (items are produced lazily by ``extractor.iter_items`` when it has one)."""
    builder = ItemSetsBuilder(max_distinct_per_user=getattr(extractor, "max_distinct_per_user",
                                                            None))
    add = builder.add
    items = getattr(extractor, "iter_items", extractor)
    for n, (user, text) in enumerate(documents, 1):
        add(user, items(text))
        if on_progress is not None and n % progress_every == 0:
            on_progress()
    if on_progress is not None:
        on_progress()
    return builder.build()  # items: int32 ids, CSR by user, with the user's own counts


def extract_sequences(documents: Iterable[tuple[object, str]], extractor,
                      on_progress: Callable[[], None] | None = None,
                      progress_every: int = 2000) -> TokenCorpus:
    """Tokenize every document into interned token-id sequences (one per run)."""
    from array import array

    from .itemsets import Vocabulary, _check_user_id
    vocab = Vocabulary()
    index, add = vocab.index, vocab.add
    users: dict = {}
    tokens, ptr, seq_user = array("i"), array("q", [0]), array("i")
    for n, (user, text) in enumerate(documents, 1):
        u = users.get(user)
        if u is None:
            _check_user_id(user)
            u = users[user] = len(users)
        for run in extractor.runs(text):
            for t in run:
                i = index.get(t)
                tokens.append(add(t) if i is None else i)
            ptr.append(len(tokens))
            seq_user.append(u)
        if on_progress is not None and n % progress_every == 0:
            on_progress()
    if on_progress is not None:
        on_progress()
    return TokenCorpus(vocab, list(users), tokens, ptr, seq_user, extractor.joiner)
    # tokens: int32 ids; sequences by user
