"""Stage 1 of a run: corpus reader → item extractor → ItemSets (private, in memory).

Two paths give the same item sets. The regex tokenizer runs columnar (``text.columnar``): the
reader hands over batches of documents (polars columns where it can parse them itself), each
batch becomes (user row, item id, count) integer arrays on every core, and the arrays are merged
by sorting, so memory grows with the distinct (user, item) pairs, never with the text. Other
tokenizers (spaCy, Hugging Face pre-tokenizers, a regex without a faithful translation) run the
Python extractor document by document, spread over the cores by ``text.parallel``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import closing

import numpy as np

from ..data.builder import ItemRowsBuilder, TokenRunsBuilder
from ..data.itemsets import ItemSets
from ..data.token_corpus import TokenCorpus
from ..data import vocabulary

# a Python-side batch holds at most this many documents or characters of text
BATCH_DOCS = 50_000
BATCH_CHARS = 32 * 2 ** 20


def extract_itemsets(documents: Iterable[tuple[object, str]], extractor: Callable[[str], list[str]],
                     on_progress: Callable[[], None] | None = None,
                     progress_every: int = 2000) -> ItemSets:
    """Tokenize and intern every document; a user's documents may be spread over the input.

    With ``extractor.max_distinct_per_user``, each user keeps its items of smallest item hash
    (ties: the item string), and memory per user stays bounded while its documents stream in."""
    from .text.columnar import columnar_extractor
    columnar = columnar_extractor(extractor)
    if columnar is not None:
        # reading, tokenizing (polars, every core) and interning (Python) overlap
        stream = prefetched(_tokenized(prefetched(document_batches(documents)), columnar))
        with closing(stream):   # an error before or during the loop stops the readers
            return _columnar_itemsets(stream, columnar, on_progress)
    from .text.parallel import parallel_items
    builder = ItemRowsBuilder(cap=getattr(extractor, "max_distinct_per_user", None))
    add = builder.add
    for n, (user, items) in enumerate(parallel_items(documents, extractor), 1):
        add(user, items)
        if on_progress is not None and n % progress_every == 0:
            on_progress()
    if on_progress is not None:
        on_progress()
    return ItemSets.from_rows(builder.build())


def extract_sequences(documents: Iterable[tuple[object, str]], extractor,
                      on_progress: Callable[[], None] | None = None,
                      progress_every: int = 2000) -> TokenCorpus:
    """Tokenize every document into interned token-id sequences (one per run)."""
    from .text.columnar import columnar_extractor
    columnar = columnar_extractor(extractor)
    if columnar is not None:
        stream = prefetched(document_batches(documents))
        with closing(stream):
            return _columnar_sequences(stream, columnar, on_progress)
    from .text.parallel import parallel_runs

    def counted(pairs):
        for n, pair in enumerate(pairs, 1):
            yield pair
            if on_progress is not None and n % progress_every == 0:
                on_progress()
        if on_progress is not None:
            on_progress()
    return TokenCorpus.from_user_runs(counted(parallel_runs(documents, extractor)),
                                      extractor.joiner)


def itemsets_from_frame(frame, user: str = "user", text: str = "text", extractor=None,
                        on_error: str = "raise") -> ItemSets:
    """Item sets straight from a pandas or polars DataFrame or a Hugging Face
    ``datasets.Dataset`` with a user-id column and a text column, validated like a corpus file
    (``corpora.FrameReader``).

    Parameters
    ----------
    frame : pandas.DataFrame, polars.DataFrame or datasets.Dataset
        One row per document.
    user : str
        The column of user ids (strings or integers; all of one user's rows form one user).
    text : str
        The column of texts.
    extractor : ItemExtractor or None
        How texts become items; None: the regex word extractor (NFKC, lower-cased words), as
        in the shipped recipes.
    on_error : str
        ``"raise"`` (a bad row stops with its row number and column) or ``"skip"``. Skipped
        rows (bad ones, and empty documents either way) are counted in a
        ``SkippedDocumentsWarning``, a NON-PRIVATE diagnostic that names rows, not their text.

    Returns
    -------
    ItemSets
        The users' distinct items with their own counts, ready for ``mechanism.release``.

    Raises
    ------
    CorpusError
        A bad row (with ``on_error = "raise"``), or a frame that gives no document (no row,
        or only blank or skipped ones).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"author": ["a", "b", "a"], "body": ["Hi there", "hi", "Bye"]})
    >>> itemsets_from_frame(df, user="author", text="body").to_dict()
    {'a': {'hi': 1, 'there': 1, 'bye': 1}, 'b': {'hi': 1}}
    """
    from .corpora import FrameReader
    from .corpora.readers import nothing_read
    if extractor is None:
        from .text.items import ItemExtractor
        from .text.tokenizers import RegexTokenizer
        extractor = ItemExtractor(RegexTokenizer())
    reader = FrameReader(frame, user_field=user, text_field=text, on_error=on_error)
    itemsets = extract_itemsets(reader, extractor)
    if not itemsets.n_users:   # as a run: a table with no document is an error, not no users
        raise nothing_read(reader)
    if reader.skipped:
        import warnings
        from ..errors import SkippedDocumentsWarning
        n = reader.skipped
        warnings.warn(SkippedDocumentsWarning(
            f"NON-PRIVATE diagnostic (do not publish): skipped {n:,} row{'' if n == 1 else 's'} "
            f"(empty documents, and bad rows with on_error=\"skip\"); the first: "
            f"{reader.skip_reasons[0]}"), stacklevel=2)
    return itemsets


# -- batches of documents ----------------------------------------------------------------------
def document_batches(documents) -> Iterator[tuple[object, object]]:
    """(users, texts) batches: a reader's own polars columns (``frames()``) when it has them,
    else ``BATCH_DOCS`` documents at a time from its ``(user, text)`` pairs (users: a list,
    texts: a polars String Series)."""
    frames = getattr(documents, "frames", None)
    if frames is not None:
        yield from frames()
        return
    it = iter(documents)
    while True:
        users: list = []
        texts: list[str] = []
        size = 0
        for user, text in it:
            users.append(user)
            texts.append(text)
            size += len(text)
            if len(texts) >= BATCH_DOCS or size >= BATCH_CHARS:
                break
        if not texts:
            return
        from .corpora.columns import text_series
        yield users, text_series(texts)


def prefetched(batches: Iterator) -> Generator:
    """``batches``, with the next one read on a background thread while the caller works on
    the current one (decompression and parsing release the GIL). At most two batches are
    held; the reader's errors are raised here, in order. The thread starts now, not at the
    first request: the caller's own set-up overlaps the first batch's reading."""
    stream = _prefetching(batches)
    next(stream)   # runs up to the first yield: the thread is started (closing stops it)
    return stream


def _prefetching(batches: Iterator) -> Generator:
    """``prefetched``'s generator: yields None once the thread is started, then the batches."""
    import queue
    import threading

    slots: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def hand_over(item) -> bool:
        """Put ``item`` in the slot unless the consumer has stopped; False once it has."""
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not hand_over((batch, None)):
                    return
            hand_over((done, None))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
            hand_over((done, e))
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()   # the reader's files, when the consumer stopped early

    worker = threading.Thread(target=produce, name="dp-vocab-reader", daemon=True)
    worker.start()
    try:
        yield None
        while True:
            batch, error = slots.get()
            if error is not None:
                raise error
            if batch is done:
                return
            yield batch
    finally:
        stop.set()
        worker.join()


# -- item sets ---------------------------------------------------------------------------------
def _tokenized(batches, columnar) -> Iterator[tuple[object, int, object, bool]]:
    """(the batch's users, first document of the slice, the slice's (doc, item) rows, whether
    it is the batch's last slice), one slice at a time: the prefetch queue holds one slice, not
    a batch's worth of n-grams."""
    ex = columnar.extractor
    levels = ex.n_max - ex.n_min + 1
    slices = 1 if levels == 1 else 4 * levels   # n-grams multiply the rows: smaller slices
    for batch_users, texts in batches:
        step = max(1, -(-len(texts) // slices))
        for start in range(0, len(texts), step):
            yield (batch_users, start, columnar.items(texts.slice(start, step)),
                   start + step >= len(texts))


def _columnar_itemsets(batches, columnar, on_progress) -> ItemSets:
    builder = ItemRowsBuilder(cap=columnar.extractor.max_distinct_per_user)
    vocabulary.item_hashes([""])   # loads the compiled hash while the reader fills a batch
    rows = np.zeros(0, dtype=np.int64)
    for batch_users, start, found, last in batches:
        if start == 0:
            rows = builder.users.rows(batch_users)
        builder.add_batch(rows[start:][found["doc"].to_numpy()], found, last)
        if last and on_progress is not None:
            on_progress()
    return ItemSets.from_rows(builder.build())


def merge_itemsets(parts: Iterable[tuple], cap: int | None) -> ItemSets:
    """One ItemSets of several, each given as (user ids, item strings, their item hashes,
    indptr, items, counts); a user may be in several: its items are added, then capped as
    ``extract_itemsets`` caps them."""
    builder = ItemRowsBuilder(cap=cap)
    for part in parts:
        builder.add_part(*part)
    return ItemSets.from_rows(builder.build())


def merge_sequences(parts: Iterable[tuple], joiner: str) -> TokenCorpus:
    """One TokenCorpus of several, each given as (user ids, token strings, tokens, seq_ptr,
    seq_user); a user's sequences from every part are kept."""
    builder = TokenRunsBuilder()
    for part in parts:
        builder.add_part(*part)
    return TokenCorpus.from_runs(builder.build(), joiner)


# -- token sequences ---------------------------------------------------------------------------
def _columnar_sequences(batches, columnar, on_progress) -> TokenCorpus:
    builder = TokenRunsBuilder()
    for batch_users, texts in batches:
        builder.add_batch(builder.users.rows(batch_users), columnar.runs(texts))
        if on_progress is not None:
            on_progress()
    return TokenCorpus.from_runs(builder.build(), columnar.extractor.joiner)
