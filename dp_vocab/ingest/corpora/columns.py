"""JSONL as polars columns, with exactly the validation of the line-by-line reader.

Why not always the Python reader: ``json.loads`` line by line costs as much as the whole
columnar pipeline after it. Why not always polars: its JSON
parser is more lenient in places and differs from ``json`` in others (duplicate keys keep the
first value, a lone ``\\ud800`` escape decodes to garbage, ``7`` and ``"7"`` in one column both
become the string "7", raw control characters inside strings are accepted), and its errors
quote the input. So the file is read in chunks of whole lines (bounded memory) and each chunk
takes the polars path only when cheap checks on its bytes and columns prove that polars and
``json`` agree on it; any other chunk goes through :meth:`JsonlReader.document` line by line,
which raises (or skips) with the same file, line and field as ever. Clean real corpora never
leave the fast path; a chunk with one bad line costs one chunk of Python parsing.

The fast path requires, for a chunk:

* no byte below 0x20 but the line feeds (raw tabs and control characters: ``json`` rejects
  them inside strings; polars does not);
* no ``\\u`` escape of a printable ASCII character (it could spell a field name) and no
  ``\\uD800``–``\\uDFFF`` escape (surrogates: ``json`` keeps lone ones, polars mangles them);
* each field name, quoted and followed by a colon, occurs exactly once per row. Every key of
  that name is spelt so (names hold no character JSON could escape), and polars found one in
  each row, so one per row means no duplicate key and no nested key of that name; a value that
  reads like the name (``"text": "text"``) is followed by no colon and is not counted. For
  string user ids, every user key is followed by a quoted string (so no integer id was turned
  into a string), and every text key by one;
* polars parses it, the user column is all strings or all 64-bit integers and the text column
  all strings, with no null, empty user id or blank text (blank: only ``str.isspace()``
  characters), no line longer than ``max_line_bytes``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ...errors import CorpusError
from .compression import _DECOMPRESS_ERRORS, corrupt_stream

CHUNK_BYTES = 16 * 2 ** 20
# a \\u escape of a printable ASCII character (U+0020..U+007F) or of a surrogate
_RISKY_ESCAPE = re.compile(rb"\\u(?:00[2-7]|[dD])")
_WS = rb"[ \t\r\n]*"   # JSON whitespace
_BLANK = r"^[\s\x1C-\x1F]*$"    # str.isspace() characters only (Python's strip() removes them)


def jsonl_frames(reader) -> Iterator[tuple[object, object]]:
    """(users, texts) per chunk: polars Series when the chunk is parsed columnar, else a list of
    users and a Series of texts."""
    for path, stream in reader.open_files():
        lineno = 0
        try:
            for first, chunk, over_long in _chunks(stream, reader.max_line_bytes):
                lineno = first
                frame = _fast(reader, chunk)
                if frame is not None:
                    yield frame
                else:
                    users, texts = _slow(reader, chunk, first)
                    if texts:
                        yield users, text_series(texts)
                if over_long is not None:
                    reader.too_long(over_long)
        except _DECOMPRESS_ERRORS as e:
            where = f"after line {lineno}" if lineno else "before its first line could be read"
            raise corrupt_stream(path, e, where) from None


def _chunks(stream, limit: int) -> Iterator[tuple[int, bytes, int | None]]:
    """(number of the first line, whole lines, number of an over-long line that followed them
    and was drained unread, or None). A chunk holds at most CHUNK_BYTES + max_line_bytes."""
    lineno, first = 1, True
    while True:
        data = stream.read(CHUNK_BYTES)
        if first:   # a share of the file: its lines keep the file's numbers
            lineno, first = lineno + getattr(stream, "lines_before", 0), False
        if not data:
            return
        over_long = None
        if not data.endswith(b"\n"):
            tail = stream.readline(limit + 1)
            if len(tail) > limit and not tail.endswith(b"\n"):
                # the last line is over max_line_bytes: drain it, never hold it whole
                while tail and not tail.endswith(b"\n"):
                    tail = stream.readline(limit + 1)
                data = data[:data.rfind(b"\n") + 1]
                over_long = lineno + data.count(b"\n")
            else:
                data += tail
        yield lineno, data, over_long
        lineno += data.count(b"\n") + (1 if over_long is not None else 0)


def _slow(reader, chunk: bytes, first: int) -> tuple[list, list]:
    users, texts = [], []
    limit = reader.max_line_bytes
    lines = chunk.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for k, line in enumerate(lines):
        if len(line) > limit:
            reader.too_long(first + k)
            continue
        doc = reader.document(first + k, line + b"\n")
        if doc is not None:
            users.append(doc[0])
            texts.append(doc[1])
    return users, texts


def _fast(reader, chunk: bytes):
    """(users, texts) Series when polars provably reads ``chunk`` as ``json`` would, else None."""
    import polars as pl
    uf, tf = reader.user_field, reader.text_field
    if not chunk or not _plain(uf) or not _plain(tf):
        return None
    data = np.frombuffer(chunk, dtype=np.uint8)
    if int(np.count_nonzero(data < 0x20)) != chunk.count(b"\n"):
        return None
    if len(chunk) > reader.max_line_bytes:
        ends = np.r_[-1, np.flatnonzero(data == 10), data.size]
        if int(np.diff(ends).max()) - 1 > reader.max_line_bytes:
            return None
    if _RISKY_ESCAPE.search(chunk):
        return None
    n, quoted_users = _keys(chunk, uf)
    if _keys(chunk, tf) != (n, n):
        return None
    if quoted_users not in (0, n):
        return None   # integer and string ids mixed in one chunk: line by line
    kind: type = str if quoted_users == n else int
    try:   # the schema is strict for integers; strings were proven quoted above
        df = pl.read_ndjson(chunk, schema={uf: pl.String if kind is str else pl.Int64,
                                           tf: pl.String})
    except Exception:  # noqa: BLE001 - any parse failure: the line-by-line reader reports it
        return None
    users, texts = df[uf], df[tf]
    if df.height != n or users.null_count() or texts.null_count():
        return None
    if kind is str and (users.str.len_bytes() == 0).any():
        return None
    if texts.str.contains(_BLANK).any():
        return None
    reader.note_id_kind(0 if kind is int else "")
    return users, texts


def _keys(chunk: bytes, name: str) -> tuple[int, int]:
    """(how many times ``name`` occurs as a key, how many of those keys hold a string): the
    quoted name followed by a colon, and by a colon and a quote. Over-counts only (a key that
    ends in the name, ``"a\\"text":``), never misses a key."""
    found = re.findall(b'"' + re.escape(name.encode()) + b'"' + _WS + b":" + _WS + b"(.?)",
                       chunk)
    return len(found), found.count(b'"')


def _plain(name: str) -> bool:
    """A field name JSON writes only one way: no character it may escape (``"``, ``\\``, ``/``)."""
    return isinstance(name, str) and name.isascii() and name.isprintable() and \
        not any(ch in name for ch in '"\\/')


# A lone surrogate (JSON "\\ud800") cannot be held in a UTF-8 column: it becomes U+FFFD, as
# the extractor's normalisation would make it anyway.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def text_series(texts: list[str]):
    """A polars String Series of ``texts`` (lone surrogates as U+FFFD)."""
    import polars as pl
    try:
        return pl.Series("text", texts, dtype=pl.String)
    except UnicodeEncodeError:
        return pl.Series("text", [_LONE_SURROGATE.sub("\ufffd", t) for t in texts],
                         dtype=pl.String)
