"""Stage 1 of a run: corpus reader → item extractor → ItemSets (private, in memory)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .itemsets import ItemSets, ItemSetsBuilder


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


class TokenCorpus:
    """Token-id sequences by user, for level-wise n-gram mechanisms (DPNE).

    ``tokens`` (int32 ids into ``vocab``), ``seq_ptr`` (int64 offsets of sequences: a document,
    or a run of it between dropped over-long tokens), ``seq_user`` (int32 user row per sequence).
    Private data, like ItemSets.
    """

    __slots__ = ("vocab", "user_ids", "tokens", "seq_ptr", "seq_user", "joiner")

    def __init__(self, vocab, user_ids, tokens, seq_ptr, seq_user, joiner=" "):
        import numpy as np
        self.vocab, self.user_ids, self.joiner = vocab, list(user_ids), joiner
        self.tokens = np.asarray(tokens, dtype=np.int32)
        self.seq_ptr = np.asarray(seq_ptr, dtype=np.int64)
        self.seq_user = np.asarray(seq_user, dtype=np.int32)

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    def without_users(self, user_ids) -> "TokenCorpus":
        import numpy as np
        gone = set(user_ids)
        drop = {i for i, u in enumerate(self.user_ids) if u in gone}
        keep_users = [i for i in range(self.n_users) if i not in drop]
        remap = np.full(self.n_users, -1, dtype=np.int64)
        remap[keep_users] = np.arange(len(keep_users))
        keep_seq = np.flatnonzero(remap[self.seq_user] >= 0)
        lengths = np.diff(self.seq_ptr)[keep_seq]
        ptr = np.zeros(keep_seq.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        take = np.concatenate([np.arange(self.seq_ptr[s], self.seq_ptr[s + 1]) for s in keep_seq]) \
            if keep_seq.size else np.zeros(0, np.int64)
        return TokenCorpus(self.vocab, [self.user_ids[i] for i in keep_users], self.tokens[take],
                           ptr, remap[self.seq_user[keep_seq]], self.joiner)

    def __repr__(self) -> str:
        return "<TokenCorpus (private data)>"


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
