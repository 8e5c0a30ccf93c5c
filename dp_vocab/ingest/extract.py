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
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data import itemsets
from ..data.itemsets import ItemSets, ItemSetsBuilder, Vocabulary, _check_user_id
from ..data.token_corpus import TokenCorpus

if TYPE_CHECKING:
    import polars as pl

# a Python-side batch holds at most this many documents or characters of text
BATCH_DOCS = 50_000
BATCH_CHARS = 32 * 2 ** 20
# merge the buffered (user, item) pairs once this many are buffered
COMPACT_PAIRS = 8_000_000


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
    builder = ItemSetsBuilder(max_distinct_per_user=getattr(extractor, "max_distinct_per_user",
                                                            None))
    add = builder.add
    for n, (user, items) in enumerate(parallel_items(documents, extractor), 1):
        add(user, items)
        if on_progress is not None and n % progress_every == 0:
            on_progress()
    if on_progress is not None:
        on_progress()
    return builder.build()  # items: int32 ids, CSR by user, with the user's own counts


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
    # tokens: int32 ids; sequences by user


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
        ``"raise"`` (a bad row stops with its row number and column) or ``"skip"``.

    Returns
    -------
    ItemSets
        The users' distinct items with their own counts, ready for ``mechanism.release``.

    >>> import polars as pl
    >>> df = pl.DataFrame({"author": ["a", "b", "a"], "body": ["Hi there", "hi", "Bye"]})
    >>> itemsets_from_frame(df, user="author", text="body").to_dict()
    {'a': {'hi': 1, 'there': 1, 'bye': 1}, 'b': {'hi': 1}}
    """
    from .corpora import FrameReader
    if extractor is None:
        from .text.items import ItemExtractor
        from .text.tokenizers import RegexTokenizer
        extractor = ItemExtractor(RegexTokenizer())
    return extract_itemsets(FrameReader(frame, user_field=user, text_field=text,
                                        on_error=on_error), extractor)


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


class _Users:
    """User ids → rows in order of first document, for batches of ids (a polars Series or a
    list). Each batch's distinct ids are numbered after the previous batches' (provisional
    rows); :meth:`finish` gives every user the row of its first document. A String or Int64
    column is numbered in polars, with no Python object per id (pypi_summaries has 842k users:
    a dict of them cost 0.3–0.7 s of the main thread)."""

    def __init__(self):
        self._parts: list = []   # each batch's distinct ids, in order of first document
        self._n = 0

    def rows(self, users) -> np.ndarray:
        """The provisional row of each document's user (int64)."""
        import polars as pl
        if isinstance(users, pl.Series) and users.dtype in (pl.String, pl.Int64) \
                and not users.null_count():   # ids of valid kinds only: no check per id
            uniq = users.unique(maintain_order=True)
            if len(uniq) == len(users):   # one document per user: uniq is users
                local = np.arange(len(users), dtype=np.int64)
            else:
                numbers = pl.Series(np.arange(len(uniq), dtype=np.int64))
                local = users.replace_strict(uniq, numbers, return_dtype=pl.Int64).to_numpy()
            return self._add(uniq, local)
        ids = users.to_list() if isinstance(users, pl.Series) else users
        index: dict = {}
        for u in ids:
            if u not in index:
                _check_user_id(u)
                index[u] = len(index)
        local = np.fromiter((index[u] for u in ids), dtype=np.int64, count=len(ids))
        return self._add(list(index), local)

    def _add(self, distinct, local: np.ndarray) -> np.ndarray:
        rows = local + self._n
        self._parts.append(distinct)
        self._n += len(distinct)
        return rows

    def finish(self) -> tuple[Any, np.ndarray | None]:
        """(the user ids by row: a list, or a polars column when they came as one kind of
        column; the row of each provisional row, or None when those are the same: no user in
        two batches)."""
        import polars as pl
        parts = self._parts
        if parts and all(isinstance(p, pl.Series) and p.dtype == parts[0].dtype
                         for p in parts):
            ids = pl.concat(parts, rechunk=True)
            lut = None
            if ids.n_unique() != len(ids):
                first = pl.DataFrame({"u": ids}).with_row_index("p").select(
                    pl.col("p").min().over("u")).to_series()
                lut = (first.rank("dense") - 1).cast(pl.Int64).to_numpy()
                ids = ids.unique(maintain_order=True)
            return ids, lut   # a column: ItemSets lists it only if it is read
        index: dict = {}
        add = index.setdefault
        lut = np.array([add(u, len(index)) for p in parts
                        for u in (p.to_list() if isinstance(p, pl.Series) else p)],
                       dtype=np.int64)
        return list(index), (None if lut.size == len(index) else lut)


def encoded_ids(column) -> tuple[np.ndarray, np.ndarray]:
    """``bounding.encode_user_ids`` of a polars String or Int64 column without nulls (the same
    bytes and offsets), built in polars: no Python object per value."""
    import polars as pl
    tag = "i:" if column.dtype == pl.Int64 else "s:"
    strings = column.cast(pl.String) if column.dtype == pl.Int64 else column
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    if not len(strings):
        return np.zeros(0, dtype=np.uint8), offsets
    np.cumsum(strings.str.len_bytes().cast(pl.Int64).to_numpy() + 2, out=offsets[1:])
    # polars strings are valid UTF-8: Python's encoding of them gives the same bytes
    text = tag + strings.str.join(tag).item()
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8), offsets


class _Interner:
    """Strings → dense ids in first-seen order, from a list (``ids``) or a polars column
    (``column_ids``). With ``hashes``, new strings are hashed as they come (the item hashes
    bounding needs): while the reader works on the next batch, not after the last."""

    def __init__(self, hashes: bool = False):
        self.strings: list[str] = []   # by id
        self._index: dict[str, int] = {}   # string → id of strings[:len(_index)]
        self._hashes: list[np.ndarray] | None = [] if hashes else None
        # column_ids: an empty column of this interner's own polars categories (they live
        # while a column of them does); its dtype is what every column is cast to
        self._categorical: pl.Series | None = None
        self._id_of_code = np.zeros(0, dtype=np.int64)   # their code → our id (−1: not yet)

    def ids(self, strings: list[str], hashes: np.ndarray | None = None) -> np.ndarray:
        """The ids of ``strings``; ``hashes``: their item hashes, when already known."""
        index = self._index
        n = len(self.strings)
        if len(index) < n:   # strings that column_ids added without the index
            index.update(zip(self.strings[len(index):], range(len(index), n)))
        add = index.setdefault
        ids = np.array([add(s, len(index)) for s in strings], dtype=np.int64)
        if len(index) > n:
            new = np.flatnonzero(ids >= n)
            new = new[np.unique(ids[new], return_index=True)[1]]   # first of each, by id
            self._add_new([strings[i] for i in new.tolist()],
                          None if hashes is None else hashes[new])
        return ids

    def _add_new(self, strings: list[str], hashes: np.ndarray | None = None,
                 column=None) -> None:
        """Appends strings not seen before (distinct) as the next ids; ``column``: the same
        strings as a polars column (encoded for hashing there)."""
        self.strings.extend(strings)
        if self._hashes is not None:
            if hashes is None:
                encoded = None if column is None else encoded_ids(column)
                hashes = itemsets.item_hashes(strings, encoded)
            self._hashes.append(hashes)

    def column_ids(self, column) -> np.ndarray:
        """The id of every string of a polars String Series (int64 array). The column is cast
        to this interner's categories (on every core), whose codes stay the same from one
        column to the next; only strings with a code not seen before (in order of first
        occurrence) reach Python: each string once per interner, not once per batch."""
        import polars as pl
        if not len(column):
            return np.zeros(0, dtype=np.int64)
        if self._categorical is None:
            self._categorical = pl.Series([], dtype=pl.Categorical(pl.Categories.random()))
        codes_col = column.cast(self._categorical.dtype).to_physical()
        codes = codes_col.to_numpy()
        top = int(codes.max()) + 1
        if top > self._id_of_code.size:
            grown = np.full(max(top, 2 * self._id_of_code.size), -1, dtype=np.int64)
            grown[:self._id_of_code.size] = self._id_of_code
            self._id_of_code = grown
        first = np.sort(codes_col.arg_unique().to_numpy())   # first occurrences, in order
        new = first[self._id_of_code[codes[first]] < 0]
        if new.size and self._index:   # ids() has numbered strings: it knows which are new
            self._id_of_code[codes[new]] = self.ids(column.gather(new).to_list())
        elif new.size:   # codes not seen before: distinct strings, new to this interner
            self._id_of_code[codes[new]] = np.arange(len(self.strings),
                                                     len(self.strings) + new.size)
            strings = column.gather(new)
            self._add_new(strings.to_list(), column=strings)
        return self._id_of_code[codes]

    def vocabulary(self) -> Vocabulary:
        hashes = None
        if self._hashes is not None:
            hashes = np.concatenate(self._hashes) if self._hashes else np.zeros(0, np.uint64)
        return Vocabulary.from_strings(self.strings, hashes)


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
    cap = columnar.extractor.max_distinct_per_user
    users, items = _Users(), _Interner(hashes=True)
    itemsets.item_hashes([""])   # loads the compiled hash while the reader fills a batch
    keys: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    buffered = merged_size = 0
    rows = np.zeros(0, dtype=np.int64)
    for batch_users, start, found, last in batches:
        if start == 0:
            rows = users.rows(batch_users)
        user_of = rows[start:][found["doc"].to_numpy()]
        if cap is not None:
            found, user_of = _cap_batch(found, user_of, cap)
        item_of = items.column_ids(found["item"])
        del found
        key, count = _distinct((user_of << 32) | item_of)
        keys.append(key)
        counts.append(count.astype(np.int64))
        buffered += key.size
        if not last:
            continue
        if buffered >= max(COMPACT_PAIRS, 2 * merged_size):   # amortised: linear in total
            merged = _merge(keys, counts, cap, items)
            keys, counts = [merged[0]], [merged[1]]
            buffered = merged_size = merged[0].size
        if on_progress is not None:
            on_progress()
    return build_itemsets(users, items, keys, counts, cap)


def _cap_batch(found, user_of: np.ndarray, cap: int):
    """The (doc, item) rows of ``found`` without the items a user over the cap in this batch
    can't keep: its ``cap`` smallest-hash items of the batch are kept (exact, as capping
    partial sums is), so a hostile user's items never all reach the vocabulary."""
    import polars as pl
    # a user over the cap has more than cap occurrences: only those users are grouped
    occurrences = np.bincount(user_of)
    if not occurrences.size or occurrences.max() <= cap:
        return found, user_of
    busy_users = np.flatnonzero(occurrences > cap)
    rows = np.flatnonzero(occurrences[user_of] > cap)
    rows = rows[np.argsort(user_of[rows], kind="stable")]   # each busy user's rows together
    ends = np.cumsum(occurrences[busy_users])
    keep = None
    for mine in np.split(rows, ends[:-1]):   # one user's rows at a time: memory per user
        held = found["item"].gather(mine)
        distinct = held.unique()
        if len(distinct) <= cap:
            continue
        kept = pl.Series(_smallest(distinct, cap), dtype=pl.String)
        if keep is None:
            keep = np.ones(len(found), dtype=bool)
        keep[mine] = held.is_in(kept.implode()).to_numpy()
    if keep is None:
        return found, user_of
    return found.filter(pl.Series(keep)), user_of[keep]


def _smallest(distinct, cap: int) -> list[str]:
    """The ``cap`` strings of smallest item hash (ties: the string), hashing in slices with a
    running threshold so that only O(cap + slice) strings are held in Python."""
    best: list[tuple[int, str]] = []
    threshold = None
    for start in range(0, len(distinct), 65_536):
        strings = distinct.slice(start, 65_536).to_list()
        h = itemsets.item_hashes(strings)
        picked = range(len(strings)) if threshold is None else \
            np.flatnonzero(h <= np.uint64(threshold)).tolist()
        best.extend((int(h[i]), strings[i]) for i in picked)
        if len(best) > cap:
            best.sort()
            del best[cap:]
            threshold = best[-1][0]
    return [s for _, s in best]


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and how often each occurs (polars' sort: every core)."""
    import polars as pl
    if not keys.size:
        return keys, np.zeros(0, np.int64)
    keys = pl.Series(keys).sort().to_numpy()
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.diff(np.r_[starts, keys.size])


def build_itemsets(users: "_Users", items: "_Interner", keys: list[np.ndarray],
                   counts: list[np.ndarray], cap: int | None) -> ItemSets:
    """ItemSets from buffered (provisional user row << 32 | item id, count) parts, merged
    and capped."""
    user_ids, final = users.finish()
    # the users' order-key input, from the column (a release needs no list of the ids)
    encoded_users = None if isinstance(user_ids, list) else encoded_ids(user_ids)
    if final is not None:   # a user in several batches: its rows become one
        for k in keys:
            k[:] = (final[k >> 32] << 32) | (k & 0xFFFFFFFF)
    key, count = _merge(keys, counts, cap, items)
    vocab = items.vocabulary()
    item_ids = key.astype(np.int32)   # the low 32 bits: the item id (< 2³¹)
    held = np.zeros(len(vocab), dtype=bool)
    held[item_ids] = True
    if not held.all():   # the cap dropped every holder of some items: renumber the rest
        new = np.cumsum(held) - 1
        kept = [s for s, h in zip(vocab.strings, held.tolist()) if h]
        vocab = Vocabulary.from_strings(kept, vocab.hashes()[held])
        item_ids = new[item_ids]
        order = np.lexsort((item_ids, key >> 32))
        key, count, item_ids = key[order], count[order], item_ids[order]
    indptr = itemsets.user_starts(key, len(user_ids))
    np.minimum(count, np.iinfo(np.int32).max, out=count)
    return ItemSets(vocab, user_ids, indptr, item_ids, count, encoded_user_ids=encoded_users)


def merge_itemsets(parts: Iterable[tuple], cap: int | None) -> ItemSets:
    """One ItemSets of several, each given as (user ids, item strings, their item hashes,
    indptr, items, counts); a user may be in several: its items are added, then capped as
    ``extract_itemsets`` caps them (exact on partial sums)."""
    users, items = _Users(), _Interner(hashes=True)
    keys, counts = [], []
    for user_ids, strings, hashes, indptr, part_items, part_counts in parts:
        ids = items.ids(list(strings), hashes)
        rows = users.rows(user_ids)   # a list, or a polars column (numbered there)
        key = (np.repeat(rows, np.diff(indptr)) << 32) | ids[part_items]
        order = np.argsort(key, kind="stable")
        keys.append(key[order])
        counts.append(np.asarray(part_counts, dtype=np.int64)[order])
    return build_itemsets(users, items, keys, counts, cap)


def merge_sequences(parts: Iterable[tuple], joiner: str) -> TokenCorpus:
    """One TokenCorpus of several, each given as (user ids, token strings, tokens, seq_ptr,
    seq_user); a user's sequences from every part are kept."""
    users, tokens = _Users(), _Interner()
    toks, lens, seq_users = [], [], []
    for user_ids, strings, part_tokens, seq_ptr, seq_user in parts:
        ids = tokens.ids(list(strings))
        rows = users.rows(list(user_ids))
        toks.append(ids[part_tokens])
        lens.append(np.diff(seq_ptr))
        seq_users.append(rows[seq_user])
    return _token_corpus(users, tokens, toks, lens, seq_users, joiner)


def _merge(keys: list[np.ndarray], counts: list[np.ndarray], cap: int | None,
           items: _Interner) -> tuple[np.ndarray, np.ndarray]:
    """Buffered (user << 32 | item, count) parts (the lists are emptied) → sorted distinct keys
    with summed counts, each user capped to its ``cap`` items of smallest hash (ties: the
    string). Capping partial sums is exact: an item among a user's ``cap`` smallest is among
    the smallest of every part that holds it, so it is never dropped and its count stays
    whole."""
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    key, count = np.concatenate(keys), np.concatenate(counts)
    keys.clear()   # consumed: the parts are freed before the sort (peak memory)
    counts.clear()
    if not (key[1:] > key[:-1]).all():
        # polars' sort of (key, count) rows, on every core; parts that follow one another
        # (each user's documents in one batch, as in many corpora) are merged already
        import polars as pl
        merged = pl.DataFrame({"key": key, "count": count}).sort("key")
        key, count = merged["key"].to_numpy(), merged["count"].to_numpy()
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        key, count = key[starts], np.add.reduceat(count, starts)
    strings = items.strings
    return itemsets.cap_distinct(key, count, cap, lambda ids: [strings[i] for i in ids])


# -- token sequences ---------------------------------------------------------------------------
def _columnar_sequences(batches, columnar, on_progress) -> TokenCorpus:
    users, tokens = _Users(), _Interner()
    tok_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    user_parts: list[np.ndarray] = []
    for batch_users, texts in batches:
        rows = users.rows(batch_users)
        runs = columnar.runs(texts)
        tok_parts.append(tokens.column_ids(runs["tok"]).astype(np.int32))
        seg, doc = runs["seg"].to_numpy(), runs["doc"].to_numpy()
        starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]]) if seg.size else \
            np.zeros(0, np.int64)
        len_parts.append(np.diff(np.r_[starts, seg.size]))
        user_parts.append(rows[doc[starts]])
        if on_progress is not None:
            on_progress()
    return _token_corpus(users, tokens, tok_parts, len_parts, user_parts,
                         columnar.extractor.joiner)


def _token_corpus(users: _Users, tokens: _Interner, toks: list[np.ndarray],
                  lens: list[np.ndarray], seq_users: list[np.ndarray], joiner: str) -> TokenCorpus:
    """A TokenCorpus of buffered parts: token ids, sequence lengths, provisional user rows."""
    user_ids, final = users.finish()
    if not isinstance(user_ids, list):
        user_ids = user_ids.to_list()
    lengths = np.concatenate(lens) if lens else np.zeros(0, np.int64)
    ptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    seq_user = np.concatenate(seq_users) if seq_users else np.zeros(0, np.int32)
    if final is not None:
        seq_user = final[seq_user]
    return TokenCorpus(tokens.vocabulary(), user_ids,
                       np.concatenate(toks) if toks else np.zeros(0, np.int32), ptr,
                       seq_user, joiner)

