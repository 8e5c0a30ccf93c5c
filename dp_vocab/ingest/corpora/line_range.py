"""A share of a line-oriented file: the lines that start in a range of its (decompressed) bytes.

Splitting one JSONL file between workers needs no index: share k holds the lines that start at
a byte offset in ``[start, end)``, so every line is in exactly one share, whatever the offsets
(a line that crosses ``end`` belongs to the share it starts in; the last share has no end). A
share decompresses and drops what comes before it, counting its line feeds, so its line numbers
are the file's. Only balance depends on the offsets being well placed.
"""

from __future__ import annotations

from pathlib import Path

_SKIP = 1 << 20   # bytes dropped at a time before the range


class LineRange:
    """A binary stream (``read``, ``readline``) of the lines of ``stream`` that start at a
    decompressed byte offset in ``[start, end)`` (``end`` None: to the end of the stream).
    ``lines_before``: how many lines come before the first one (known once reading started)."""

    def __init__(self, stream, start: int, end: int | None):
        self._stream, self._start, self._end = stream, start, end
        self._pos = 0              # offset of the next byte of the stream
        self._at_line_start = True
        self._started = self._done = False
        self.lines_before = 0

    def _skip_to_start(self) -> None:
        self._started = True
        stream, left, last = self._stream, self._start, b"\n"
        while left > 0:
            data = stream.read(min(left, _SKIP))
            if not data:
                self._done = True
                return
            left -= len(data)
            self._pos += len(data)
            self.lines_before += data.count(b"\n")
            last = data[-1:]
        while last != b"\n":   # the range starts inside a line: it belongs to the share before
            data = stream.readline(_SKIP)
            if not data:
                self._done = True
                return
            self._pos += len(data)
            last = data[-1:]
            if last == b"\n":
                self.lines_before += 1

    def _past_end(self) -> bool:
        return self._end is not None and self._pos >= self._end

    def _took(self, data: bytes) -> bytes:
        if not data:
            self._done = True
            return data
        self._pos += len(data)
        self._at_line_start = data.endswith(b"\n")
        return data

    def read(self, n: int = -1) -> bytes:
        if not self._started:
            self._skip_to_start()
        if self._done or (self._past_end() and self._at_line_start):
            return b""
        if self._past_end():   # finish the line that started inside the range
            return self._took(self._stream.readline(n if n and n > 0 else -1))
        size = self._end - self._pos if self._end is not None else -1
        if n is not None and n >= 0:
            size = n if size < 0 else min(n, size)
        return self._took(self._stream.read(size))

    def readline(self, limit: int = -1) -> bytes:
        if not self._started:
            self._skip_to_start()
        if self._done or (self._past_end() and self._at_line_start):
            return b""
        return self._took(self._stream.readline(limit))


def decompressed_size(path: Path) -> int:
    """A guess of the file's decompressed size, for placing split offsets: the gzip trailer's
    size (modulo 4 GiB, so checked against the compressed size), else the file's size times a
    typical text compression ratio for other compressed files."""
    size = path.stat().st_size
    suffix = path.suffix.lower()
    if suffix == ".gz" and size >= 18:
        with open(path, "rb") as f:
            f.seek(-4, 2)
            isize = int.from_bytes(f.read(4), "little")
        return isize if isize >= size else size * 4
    if suffix in (".bz2", ".xz"):
        return size * 4
    return size


def split_offsets(path: Path, n: int) -> list[tuple[int, int | None]]:
    """``n`` byte ranges covering the whole file, the last open-ended."""
    step = max(decompressed_size(path) // n, 1)
    return [(k * step, (k + 1) * step if k < n - 1 else None) for k in range(n)]


__all__ = ["LineRange", "decompressed_size", "split_offsets"]
