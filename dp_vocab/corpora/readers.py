"""Streaming readers: JSONL, CSV and a folder of text files; .gz/.bz2/.xz read transparently.

A reader is an iterable of ``(user_id, text)``. Bad input raises :class:`CorpusError` naming
file, line and field, unless ``on_error = "skip"``: then the line is skipped and counted in
``reader.skipped`` (with the first few reasons in ``reader.skip_reasons``). Empty documents count
as bad input. Progress is reported in bytes of the (compressed) input, never in private counts.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import sys
from collections.abc import Iterator
from pathlib import Path

from ..errors import CorpusError
from ..privacy.params import check_choice, check_positive_int

ON_ERROR = ("raise", "skip")
_KEEP_REASONS = 5


def _open_binary(path: Path):
    """(raw file, decompressed binary stream)."""
    raw = open(path, "rb")
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")
    if suffix == ".bz2":
        return raw, bz2.BZ2File(raw, mode="rb")
    if suffix == ".xz":
        return raw, lzma.LZMAFile(raw, mode="rb")
    return raw, raw


def _expand(path) -> list[Path]:
    """A file, or a glob pattern (``data/*.jsonl.gz``) matching one or more files, sorted."""
    text = str(path)
    if any(ch in text for ch in "*?["):
        import glob
        files = sorted(Path(f) for f in glob.glob(text, recursive=True) if Path(f).is_file())
        if not files:
            raise CorpusError("no file matches this pattern. Point the recipe at your data with "
                              "--paths.corpus FILE-OR-PATTERN", path=text)
        return files
    return [_check_path(path)]


def _check_path(path, kind: str = "file") -> Path:
    p = Path(path)
    if kind == "file" and not p.is_file():
        hint = " (it is a directory; use the text-folder reader)" if p.is_dir() else ""
        raise CorpusError(f"corpus file not found{hint}. Point the recipe at it with "
                          f"--paths.corpus FILE", path=p)
    if kind == "dir" and not p.is_dir():
        raise CorpusError("corpus folder not found. Point the recipe at it with "
                          "--paths.corpus DIR", path=p)
    return p


class _Reader:
    def __init__(self, path, on_error: str, kind: str = "file"):
        if kind == "file":
            self.files = _expand(path)
            self.path = Path(path)
        else:
            self.path = _check_path(path, kind)
            self.files = [self.path]
        self.on_error = check_choice(on_error, "on_error", ON_ERROR)
        self.skipped = 0
        self.skip_reasons: list[str] = []
        self._raw = None
        self._current: Path | None = None
        self._finished_bytes = 0

    def _open(self):
        """Yield (path, decompressed binary stream) for each input file, tracking progress."""
        for f in self.files:
            raw, stream = _open_binary(f)
            self._raw, self._current = raw, f
            with raw, stream:
                yield f, stream
            self._finished_bytes += f.stat().st_size
        self._raw = None

    def _bad(self, message: str, line: int | None = None, field: str | None = None) -> None:
        err = CorpusError(message, path=self._current or self.path, line=line, field=field)
        if self.on_error == "raise":
            raise err
        self.skipped += 1
        if len(self.skip_reasons) < _KEEP_REASONS:
            self.skip_reasons.append(str(err))

    def progress(self) -> tuple[int, int]:
        """(bytes of input read, total bytes), for a progress bar."""
        total = sum(f.stat().st_size for f in self.files)
        done = self._finished_bytes
        if self._raw is not None and not self._raw.closed:
            try:
                done += self._raw.tell()
            except (OSError, ValueError):
                pass
        return min(done, total), total

    def describe(self) -> dict:
        return {"reader": type(self).__name__, "path": str(self.path), "on_error": self.on_error}


def _check_text(reader: _Reader, text, field: str, line: int | None) -> str | None:
    if not isinstance(text, str):
        reader._bad(f"expected a string, found {type(text).__name__}", line, field)
        return None
    if not text.strip():
        reader._bad("empty document (set on_error = \"skip\" to skip such lines)", line, field)
        return None
    return text


def _check_user(reader: _Reader, user, field: str, line: int | None):
    if isinstance(user, bool) or not isinstance(user, (str, int)) or user == "":
        reader._bad(f"expected a non-empty string or integer user id, found {user!r}"[:200],
                    line, field)
        return None
    return user


class JsonlReader(_Reader):
    """One JSON object per line with a user field and a text field (defaults ``user``, ``text``)."""

    def __init__(self, path, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", max_line_bytes: int = 16 * 2 ** 20):
        super().__init__(path, on_error)
        self.user_field, self.text_field = user_field, text_field
        self.max_line_bytes = check_positive_int(max_line_bytes, "max_line_bytes")

    def _lines(self, stream):
        """Lines of at most max_line_bytes; a longer one is reported (or skipped) without ever
        being held in memory whole."""
        limit = self.max_line_bytes
        readline = stream.readline
        lineno = 0
        while True:
            line = readline(limit + 1)
            if not line:
                return
            lineno += 1
            if len(line) > limit and not line.endswith(b"\n"):
                while True:  # drain the rest of the over-long line in bounded chunks
                    rest = readline(limit + 1)
                    if not rest or rest.endswith(b"\n"):
                        break
                self._bad(f"line longer than max_line_bytes = {limit} bytes; raise "
                          f"max_line_bytes if such documents are expected", lineno)
                yield lineno, None
                continue
            yield lineno, line

    def __iter__(self) -> Iterator[tuple[object, str]]:
        uf, tf = self.user_field, self.text_field
        loads = json.loads
        for path, stream in self._open():
            lineno = 0
            try:
                for lineno, line in self._lines(stream):
                    if line is None:
                        continue
                    try:
                        obj = loads(line)
                    except UnicodeDecodeError as e:
                        self._bad(f"not valid UTF-8 ({e.reason} at byte {e.start} of the line)",
                                  lineno)
                        continue
                    except ValueError as e:
                        if not line.strip():
                            continue  # blank lines carry nothing
                        self._bad(f"not valid JSON ({e})", lineno)
                        continue
                    except RecursionError:
                        self._bad("JSON nested too deeply", lineno)
                        continue
                    if not isinstance(obj, dict):
                        self._bad(f"expected a JSON object, found {type(obj).__name__}", lineno)
                        continue
                    if uf not in obj:
                        self._bad("missing (set user_field to the key that holds the user id)",
                                  lineno, uf)
                        continue
                    if tf not in obj:
                        self._bad("missing (set text_field to the key that holds the text)",
                                  lineno, tf)
                        continue
                    user = _check_user(self, obj[uf], uf, lineno)
                    text = _check_text(self, obj[tf], tf, lineno) if user is not None else None
                    if text is not None:
                        yield user, text
            except (OSError, EOFError, lzma.LZMAError) as e:
                raise CorpusError(f"cannot decompress or read after line {lineno}: {e}",
                                  path=path) from None


class CsvReader(_Reader):
    """A CSV file with a header row naming the user and text columns."""

    def __init__(self, path, user_field: str = "user", text_field: str = "text",
                 delimiter: str = ",", on_error: str = "raise"):
        super().__init__(path, on_error)
        self.user_field, self.text_field, self.delimiter = user_field, text_field, delimiter

    def __iter__(self) -> Iterator[tuple[object, str]]:
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        for path, stream in self._open():
            yield from self._rows(path, stream)

    def _rows(self, path, stream) -> Iterator[tuple[object, str]]:
        text_stream = io.TextIOWrapper(stream, encoding="utf-8", errors="strict", newline="")
        reader = csv.reader(text_stream, delimiter=self.delimiter)
        try:
            header = next(reader)
        except StopIteration:
            return
        except UnicodeDecodeError as e:
            raise CorpusError(f"not valid UTF-8 ({e.reason})", path=path, line=1) from None
        for name in (self.user_field, self.text_field):
            if name not in header:
                raise CorpusError(f"column missing from the header {header[:10]!r}; set "
                                  f"user_field/text_field", path=path, line=1, field=name)
        ui, ti = header.index(self.user_field), header.index(self.text_field)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except UnicodeDecodeError as e:
                # the decoder fails on a whole chunk: the row number is the best position
                raise CorpusError(f"not valid UTF-8 ({e.reason}) at or after this line",
                                  path=path, line=reader.line_num + 1) from None
            except csv.Error as e:
                self._bad(f"malformed CSV ({e})", reader.line_num)
                continue
            if not row:
                continue
            if len(row) != len(header):
                self._bad(f"expected {len(header)} columns, found {len(row)}", reader.line_num)
                continue
            user = _check_user(self, row[ui], self.user_field, reader.line_num)
            text = _check_text(self, row[ti], self.text_field, reader.line_num) \
                if user is not None else None
            if text is not None:
                yield user, text


class TextDirReader(_Reader):
    """A folder of UTF-8 text files: one user per file (``user_per = "file"``, id = relative
    path without suffix) or per sub-folder (``user_per = "folder"``, every file below it)."""

    def __init__(self, path, pattern: str = "*.txt", user_per: str = "file",
                 on_error: str = "raise"):
        super().__init__(path, on_error, kind="dir")
        self.pattern = pattern
        self.user_per = check_choice(user_per, "user_per", ("file", "folder"))
        self._done = self._total = 0

    def _files(self) -> list[Path]:
        return sorted(p for p in self.path.rglob(self.pattern) if p.is_file())

    def progress(self) -> tuple[int, int]:
        """(bytes of the files read, bytes of all files), like the file readers' progress."""
        return self._done, self._total

    def __iter__(self) -> Iterator[tuple[object, str]]:
        files = self._files()
        sizes = [p.stat().st_size for p in files]
        self._total = sum(sizes)
        for p, size in zip(files, sizes):
            rel = p.relative_to(self.path)
            self._done += size
            if self.user_per == "folder":
                if len(rel.parts) < 2:
                    continue  # files directly in the root belong to no user folder
                user = rel.parts[0]
            else:
                user = rel.with_suffix("").as_posix()
            try:
                raw, stream = _open_binary(p)
                with raw, stream:
                    data = stream.read()
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                line = data[:e.start].count(b"\n") + 1
                err = CorpusError(f"not valid UTF-8 ({e.reason})", path=p, line=line)
                if self.on_error == "raise":
                    raise err from None
                self.skipped += 1
                continue
            except OSError as e:
                raise CorpusError(f"cannot read ({e})", path=p) from None
            if not text.strip():
                err = CorpusError("empty document (set on_error = \"skip\" to skip it)", path=p)
                if self.on_error == "raise":
                    raise err
                self.skipped += 1
                continue
            yield user, text
