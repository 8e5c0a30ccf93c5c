"""Streaming readers: JSONL, CSV and a folder of text files; .gz/.bz2/.xz read transparently.

A reader is an iterable of ``(user_id, text)``. Bad input raises :class:`CorpusError` naming
file, line and field, unless ``on_error = "skip"``: then the line is skipped and counted in
``reader.skipped`` (with the first few reasons in ``reader.skip_reasons``). Empty documents are
skipped and counted whatever ``on_error`` says; a corpus that gives no document at all is an
error (``nothing_read``). Progress is reported in bytes of the (compressed) input, never in
private counts.

Messages never quote the input: they describe what was found by its kind ("found a JSON list"),
because a value in a corpus may be private. Skip counts and reasons are operator diagnostics
(console only), never written to an output.

User ids keep their JSON type: ``7`` and ``"7"`` are two different users. A run that sees both
integer and string ids warns once (:class:`MixedUserIdWarning`), without naming any id.
"""

from __future__ import annotations

import bz2
import csv
import functools
import gzip
import json
import lzma
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from ...errors import CorpusError, ParameterError
from .bundled import bundled_file
from .compression import _DECOMPRESS_ERRORS, _decompress_reason, corrupt_stream
from ...privacy.params import check_choice, check_name, check_positive_int

ON_ERROR = ("raise", "skip")
_KEEP_REASONS = 5
DEFAULT_MAX_LINE_BYTES = 16 * 2 ** 20
DEFAULT_MAX_FILE_BYTES = 64 * 2 ** 20


class MixedUserIdWarning(UserWarning):
    """Both integer and string user ids occur: ``7`` and ``"7"`` are counted as two users."""


MIXED_ID_MESSAGE = ("user ids of both kinds occur (JSON integers and strings): an integer id and "
                    "the same digits as a string are two different users. Make the ids one kind "
                    "if they name the same people")


def _kind(value) -> str:
    """What a JSON value is, without its content (the content may be private)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "an empty string" if value == "" else "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON list"
    return f"a {type(value).__name__}"


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
    return [bundled_file(path) or _check_path(path)]


def _check_path(path, kind: str = "file") -> Path:
    p = Path(path)
    if kind == "file" and p.is_dir():
        raise CorpusError("expected a corpus file, found a folder. For a folder of text files "
                          "(one user per file), use the text-folder reader: --corpus.@readers "
                          "dp_vocab.text_folder.v1 (in a recipe, [corpus] @readers = "
                          "\"dp_vocab.text_folder.v1\")", path=p)
    if kind == "file" and not p.is_file():
        raise CorpusError(f"corpus file not found{_where(p)}. Point the recipe at it with "
                          f"--paths.corpus FILE, or pass an existing path", path=p)
    if kind == "dir" and not p.is_dir():
        if p.is_file():
            raise CorpusError("expected a folder, found a file. For a corpus file, use the reader "
                              "of its format: --corpus.@readers dp_vocab.jsonl.v1 (or csv, "
                              "parquet, arrow)", path=p)
        raise CorpusError(f"corpus folder not found{_where(p)}. Point the recipe at it with "
                          f"--paths.corpus DIR, or pass an existing path", path=p)
    return p


def _where(p: Path) -> str:
    """A relative path is read from the working directory, not from the recipe's folder."""
    return "" if p.is_absolute() else f" (a relative path: read from the current directory, " \
                                      f"{Path.cwd()})"


def nothing_read(reader) -> CorpusError:
    """The error of a corpus that gave no document: every line (row, file) skipped, or none
    there; a release from it would be empty whatever the recipe says. It names the reader's
    path, counts and the first skip reason only, never a value (any reader: a registered one
    may lack ``skipped`` or ``path``)."""
    skipped = getattr(reader, "skipped", 0)
    reasons = getattr(reader, "skip_reasons", [])
    unit = getattr(reader, "unit", "line")
    files = getattr(reader, "files", None)
    if not skipped:
        if files == []:
            fix = "Pass a table that holds documents"
        elif files and all(_size(f) == 0 for f in files):
            fix = (f"{'The file is' if len(files) == 1 else 'Every file matched is'} empty "
                   f"(0 bytes), as a write that stopped leaves it. Point the recipe at your data "
                   f"with --paths.corpus FILE-OR-PATTERN")
        else:
            fix = "Point the recipe at your data with --paths.corpus FILE-OR-PATTERN"
        return CorpusError(f"no document was read: found no {unit} holding a document. {fix}",
                           path=getattr(reader, "path", None))
    found = f"all {skipped:,} {unit}s were skipped" if skipped > 1 else \
        f"its one {unit} was skipped"
    if reasons:
        found += f" (the first: {reasons[0]})" if skipped > 1 else f" ({reasons[0]})"
    first = reasons[0] if reasons else ""
    if isinstance(reader, TextDirReader):
        fix = f"Check that the files matching pattern {reader.pattern!r} hold the documents"
    elif "empty document" in first and hasattr(reader, "text_field"):
        fix = "Check that text= names the column holding the texts" if files == [] else \
            "Check that text_field names the field holding the texts"
    elif "field '" in first and hasattr(reader, "text_field"):
        fix = "Check that user= and text= name the columns holding the user ids and the " \
              "texts" if files == [] else "Check that user_field and text_field name the " \
              "fields holding the user ids and the texts"
    elif first:   # the reason says what to fix (a long line, a damaged file, a CSV row)
        fix = ""
    else:
        fix = "Check that it holds the documents"
    if getattr(reader, "on_error", None) == "skip" and "empty document" not in first:
        fix += ("; " if fix else "") + \
            f'on_error = "skip" skips bad {unit}s, it cannot make a corpus of them'
    return CorpusError(f"no document was read: {found}." + (f" {fix}" if fix else ""),
                       path=getattr(reader, "path", None))


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


class _Reader:
    max_line_bytes: int

    def __init__(self, path, on_error: str, kind: str = "file"):
        if kind != "memory" and (not isinstance(path, (str, os.PathLike))
                                 or "\0" in os.fspath(path) or not os.fspath(path)):
            raise ParameterError("path", path, "a path to the corpus (a non-empty string)")
        if kind == "file":
            self.files = _expand(path)
            self.path = Path(path)
        elif kind == "memory":   # an in-memory table: ``path`` is its display name
            self.files = []
            self.path = Path(path)
        else:
            self.path = _check_path(path, kind)
            self.files = [self.path]
        self.on_error = check_choice(on_error, "on_error", ON_ERROR)
        # how to skip bad lines, in the words of where this reader was configured
        self._skip_hint = 'pass on_error="skip"' if kind == "memory" else \
            'set corpus.on_error = "skip" (on_error="skip" from Python)'
        self.unit = "line"   # what its numbers count: table readers count rows, text folders files
        self.skipped = 0
        self.skip_reasons: list[str] = []
        self._raw = None
        self._stream = None
        self._current: Path | None = None
        self._finished_bytes = 0
        self._id_kinds: set = set()
        # (start, end) decompressed byte offsets: read only the lines starting there (a share
        # of a one-file input, ``corpora.line_range``); None: every line
        self.line_range: tuple[int, int | None] | None = None

    def open_files(self):
        """Yield (path, decompressed binary stream) for each input file, tracking progress."""
        for f in self.files:
            try:
                raw, stream = _open_binary(f)
            except OSError as e:
                raise CorpusError(f"cannot open ({e.strerror or type(e).__name__})",
                                  path=f) from None
            self._raw, self._stream, self._current = raw, stream, f
            with raw, stream:
                if self.line_range is not None:
                    from .line_range import LineRange
                    yield f, LineRange(stream, *self.line_range)
                else:
                    yield f, stream
            self._finished_bytes += f.stat().st_size
        self._raw = self._stream = None

    def _lines(self, stream):
        """(line number, bytes) of each physical line of at most ``max_line_bytes``; a longer
        one is reported (or, in skip mode, given as None) without ever being held whole."""
        limit = self.max_line_bytes
        readline = stream.readline
        lineno = None
        while True:
            line = readline(limit + 1)
            if lineno is None:   # a share of the file: its lines keep the file's numbers
                lineno = getattr(stream, "lines_before", 0)
            if not line:
                return
            lineno += 1
            if len(line) > limit and not line.endswith(b"\n"):
                while True:  # drain the rest of the over-long line in bounded chunks
                    rest = readline(limit + 1)
                    if not rest or rest.endswith(b"\n"):
                        break
                self.too_long(lineno)
                yield lineno, None
                continue
            yield lineno, line

    def too_long(self, lineno: int) -> None:
        self.report_bad(f"line longer than max_line_bytes = {self.max_line_bytes} bytes; raise "
                        f"max_line_bytes if such documents are expected", lineno)

    def report_bad(self, message: str, line: int | None = None, field: str | None = None,
                   path: Path | None = None) -> None:
        """A bad line (row) of the input: raised as a CorpusError naming the file, line and
        field, or, with ``on_error = "skip"``, counted with its reason. ``message`` names the
        value's kind only, never the value."""
        path = path or self._current or self.path
        if self.on_error == "raise":
            self._check_compressed_stream(line)
            raise CorpusError(f"{message}. Fix the {self.unit}, or {self._skip_hint} to "
                              f"skip such {self.unit}s" if line is not None else message,
                              path=path, line=line, field=field)
        self.skip(message, line, field, path)

    def skip(self, message: str, line: int | None = None, field: str | None = None,
             path: Path | None = None) -> None:
        """A line (row, file) not read, counted with its reason: a bad one under
        ``on_error = "skip"``, or an empty document whatever ``on_error`` says (an empty
        ``__init__.py`` is no error)."""
        path = path or self._current or self.path
        self.skipped += 1
        if len(self.skip_reasons) < _KEEP_REASONS:
            self.skip_reasons.append(str(CorpusError(message, path=path, line=line, field=field)))

    def add_skipped(self, n: int, reasons) -> None:
        """``n`` lines skipped elsewhere (a Dask worker's copy of this reader), and their
        reasons, counted here as ``report_bad`` counts its own (the first few reasons kept)."""
        self.skipped += n
        self.skip_reasons.extend(list(reasons)[:max(_KEEP_REASONS - len(self.skip_reasons), 0)])

    @property
    def id_kinds(self) -> frozenset:
        """The kinds of user id (int, str) read so far."""
        return frozenset(self._id_kinds)

    def reading(self, path: Path, line_range: tuple[int, int | None] | None = None):
        """A reader with these settings of ``path`` (one of this reader's files) alone, or of
        the lines starting in ``line_range`` (decompressed byte offsets, a share of it), with
        nothing read or counted yet: a Dask worker's part of the input."""
        import copy
        part = copy.copy(self)
        part.files, part.path, part.line_range = [path], path, line_range
        part.skipped, part.skip_reasons, part._id_kinds = 0, [], set()
        part._raw = part._stream = part._current = None
        part._finished_bytes = 0
        return part

    def _check_compressed_stream(self, line: int | None) -> None:
        """Before blaming a line of a compressed file, check the stream itself: a damaged
        archive decompresses to garbage that only the final checksum (or the decoder) catches."""
        stream, raw = self._stream, self._raw
        if stream is None or stream is raw or stream.closed:
            return
        try:
            while stream.read(1 << 20):
                pass
        except _DECOMPRESS_ERRORS as e:
            raise CorpusError(f"the compressed stream is corrupt ({_decompress_reason(e)}); the "
                              f"damage shows at or before line {line}. Re-create or re-download "
                              f"the file", path=self._current) from None

    def note_id_kind(self, user) -> None:
        """Count ``user``'s kind of id (int, str): a warning once both kinds were read."""
        kind = int if isinstance(user, int) else str
        if kind not in self._id_kinds:
            self._id_kinds.add(kind)
            if len(self._id_kinds) == 2:
                warnings.warn(MIXED_ID_MESSAGE, MixedUserIdWarning, stacklevel=2)

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
        """The record's ``corpus``: the reader, its settings, and what one user is (the
        privacy unit in this corpus's terms)."""
        out = {"reader": type(self).__name__, "path": str(self.path), "on_error": self.on_error}
        user_field = getattr(self, "user_field", None)
        if user_field is not None:
            kind = "field" if isinstance(self, JsonlReader) else "column"
            out.update(user_field=user_field, text_field=getattr(self, "text_field"),
                       user=f"all documents with the same value in {kind} {user_field!r}")
        return out


def _check_text(reader: _Reader, text, field: str, line: int | None) -> str | None:
    if not isinstance(text, str):
        reader.report_bad(f"expected a string, found {_kind(text)}", line, field)
        return None
    if not text.strip():
        reader.skip("empty document, skipped", line, field)
        return None
    return text


def _check_user(reader: _Reader, user, field: str, line: int | None):
    if isinstance(user, bool) or not isinstance(user, (str, int)) or user == "":
        found = "a number that is not an integer" if isinstance(user, float) else _kind(user)
        reader.report_bad(f"expected a non-empty string or integer user id, found {found}",
                          line, field)
        return None
    reader.note_id_kind(user)
    return user


class JsonlReader(_Reader):
    """One JSON object per line with a user field and a text field (defaults ``user``, ``text``).

    User ids are JSON strings or integers and keep their type: ``7`` and ``"7"`` are two users
    (a warning says so when both kinds occur). A line longer than ``max_line_bytes`` is an
    error (or a skip), never held in memory whole.
    """

    def __init__(self, path, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
        super().__init__(path, on_error)
        for f in self.files:
            _check_not_other_format(f, "jsonl")
        self.user_field = check_name(user_field, "user_field")
        self.text_field = check_name(text_field, "text_field")
        self.max_line_bytes = check_positive_int(max_line_bytes, "max_line_bytes",
                                                 maximum=2 ** 30)

    def __iter__(self) -> Iterator[tuple[object, str]]:
        for path, stream in self.open_files():
            lineno = 0
            try:
                for lineno, line in self._lines(stream):
                    if line is not None:
                        doc = self.document(lineno, line)
                        if doc is not None:
                            yield doc
            except _DECOMPRESS_ERRORS as e:
                raise corrupt_stream(path, e, f"after line {lineno}" if lineno else
                                     "before its first line") from None

    def frames(self):
        """The documents as (users, texts) polars columns, a chunk of the file at a time, parsed
        by polars where the chunk is clean and line by line (:meth:`document`) where not: the
        same documents, warnings and errors as iterating (``corpora.columns``)."""
        from .columns import jsonl_frames
        return jsonl_frames(self)

    def _plain_text(self) -> str:
        """A hint when the file's name says plain text (``notes.txt``): most likely one of
        the text files the text-folder reader reads."""
        current = self._current or self.path
        suffixes = [x.lower() for x in current.suffixes if x.lower() not in (".gz", ".bz2", ".xz")]
        if not suffixes or suffixes[-1] not in (".txt", ".text", ".md"):
            return ""
        return ("; the file's name says plain text: for a folder of text files, one user per "
                "file, use the text-folder reader (--corpus.@readers dp_vocab.text_folder.v1)")

    def document(self, lineno: int, line: bytes) -> tuple[object, str] | None:
        """One line's (user, text), or None for a blank line or a bad one (reported)."""
        uf, tf = self.user_field, self.text_field
        twice = _FieldsTwice.for_line(line, (uf, tf))
        try:   # one parse, at the same depth whether or not keys are watched
            obj = json.loads(line, object_pairs_hook=twice)
        except UnicodeDecodeError as e:
            self.report_bad(f"not valid UTF-8 ({e.reason} at byte {e.start} of the line)", lineno)
            return None
        except json.JSONDecodeError as e:
            if not line.strip():
                return None  # blank lines carry nothing
            # e.msg and the column describe the syntax, never quote the line
            reason = e.msg.removesuffix(" at")   # "Invalid control character at"
            if reason == "Invalid control character" and not e.doc[e.pos:].strip():
                reason = "string not closed before the end of the line"
            self.report_bad(f"not valid JSON ({reason}, column {e.colno}){self._plain_text()}",
                            lineno)
            return None
        except ValueError:
            self.report_bad("not valid JSON", lineno)
            return None
        except RecursionError:
            self.report_bad("JSON nested too deeply", lineno)
            return None
        if not isinstance(obj, dict):
            self.report_bad(f"expected a JSON object, found {_kind(obj)}", lineno)
            return None
        if twice is not None and twice.found:
            self.report_bad("given twice in the object: JSON readers differ on which one counts "
                            "(Python's json the last, others the first); keep one", lineno,
                            twice.found[0])
            return None
        if uf not in obj and tf not in obj:   # both named at once: one fix, not two runs
            self.report_bad(f"missing, and so is field {tf!r} (set user_field and text_field "
                            f"to the keys that hold the user id and the text; --corpus.user_field "
                            f"KEY --corpus.text_field KEY on the command line)", lineno, uf)
            return None
        if uf not in obj:
            self.report_bad("missing (set user_field to the key that holds the user id; "
                            "--corpus.user_field KEY on the command line)", lineno, uf)
            return None
        if tf not in obj:
            self.report_bad("missing (set text_field to the key that holds the text; "
                            "--corpus.text_field KEY on the command line)", lineno, tf)
            return None
        user = _check_user(self, obj[uf], uf, lineno)
        text = _check_text(self, obj[tf], tf, lineno) if user is not None else None
        return None if text is None else (user, text)


# what a file's name says it holds, and the reader for it (compression suffixes aside)
FORMAT_OF_SUFFIX = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".arrow": "arrow",
                    ".arrows": "arrow", ".feather": "arrow", ".ipc": "arrow", ".jsonl": "jsonl",
                    ".ndjson": "jsonl", ".json": "jsonl"}


def format_of(path: Path) -> str | None:
    """The format ``path``'s name gives (``FORMAT_OF_SUFFIX``), or None."""
    suffixes = [x.lower() for x in path.suffixes if x.lower() not in (".gz", ".bz2", ".xz")]
    return FORMAT_OF_SUFFIX.get(suffixes[-1]) if suffixes else None


def _check_not_other_format(path: Path, reader: str) -> None:
    """A file whose name says another format is refused before it is read: read as JSON
    lines, a CSV file would fail line by line (or, skipping, be dropped whole)."""
    found = format_of(path)
    if found is not None and found != reader:
        raise CorpusError(f"the file's name says {found.upper()}, but the {reader} reader reads "
                          f"{'JSON lines' if reader == 'jsonl' else reader.upper()}. Use its "
                          f"reader: --corpus.@readers dp_vocab.{found}.v1 (in a recipe, "
                          f"[corpus] @readers = \"dp_vocab.{found}.v1\"; from Python, its "
                          f"reader class)", path=path)


class _FieldsTwice:
    """json's object_pairs_hook that notes which of ``names`` the line's object holds as a
    key twice (objects close inner first: the outer object's call comes last)."""

    def __init__(self, names: tuple[str, ...]):
        self.names: tuple[str, ...] = names
        self.found: list[str] = []

    def __call__(self, pairs):
        keys = [k for k, _ in pairs]
        self.found = [n for n in self.names if keys.count(n) > 1]
        return dict(pairs)

    @classmethod
    def for_line(cls, line: bytes, names: tuple[str, ...]) -> "_FieldsTwice | None":
        """A hook for a line where a name may occur twice: written plainly twice, spelt with a
        \\u escape (the only other spelling of a name ``columns._plain`` accepts), or a line
        json may read as UTF-16/32 (NUL bytes); None (a plain parse) for the rest."""
        quoted = _quoted_plain(names)
        if quoted is not None and all(line.count(q) < 2 for q in quoted) \
                and b"\\u" not in line and b"\x00" not in line:
            return None
        return cls(names)


@functools.lru_cache(maxsize=16)
def _quoted_plain(names: tuple[str, ...]) -> tuple[bytes, ...] | None:
    """The names as JSON writes them, when each has only that spelling (else None): computed
    once per reader's fields, not per line."""
    from .columns import _plain
    return tuple(json.dumps(n).encode() for n in names) if all(map(_plain, names)) else None


class CsvReader(_Reader):
    """A CSV file with a header row naming the user and text columns, read strictly.

    A quoted field left open to the end of the file is an error (a lenient reader would merge
    every following row into one document). A UTF-8 byte-order mark (Excel's default) is
    accepted. A physical line or a field longer than ``max_line_bytes`` is an error (or a
    skip), never held in memory whole. Bad UTF-8 is reported on its own line.
    """

    def __init__(self, path, user_field: str = "user", text_field: str = "text",
                 delimiter: str = ",", on_error: str = "raise",
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
        super().__init__(path, on_error)
        if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n":
            raise ParameterError("delimiter", delimiter, "one character other than a quote or "
                                 "a line break, e.g. \",\" or \"\\t\"")
        self.user_field = check_name(user_field, "user_field")
        self.text_field = check_name(text_field, "text_field")
        self.delimiter = delimiter
        self.max_line_bytes = check_positive_int(max_line_bytes, "max_line_bytes",
                                                 maximum=2 ** 30)

    def __iter__(self) -> Iterator[tuple[object, str]]:
        for path, stream in self.open_files():
            try:
                yield from self._rows(path, stream)
            except _DECOMPRESS_ERRORS as e:
                raise corrupt_stream(path, e) from None

    def _decoded_lines(self, stream):
        """Decoded physical lines, so that a decoding error names its own line; an over-long
        or undecodable line is reported and, in skip mode, replaced by an empty line."""
        for lineno, line in self._lines(stream):
            if line is None:
                yield "\n"
                continue
            try:
                yield line.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as e:
                self.report_bad(f"not valid UTF-8 ({e.reason} at byte {e.start} of the line)",
                                lineno)
                yield "\n"

    def _rows(self, path, stream) -> Iterator[tuple[object, str]]:
        # the field limit also bounds a quoted field that spans many lines
        csv.field_size_limit(self.max_line_bytes)
        reader = csv.reader(self._decoded_lines(stream), delimiter=self.delimiter, strict=True)
        try:
            header = next(reader)
        except StopIteration:
            raise CorpusError("empty file: expected a header row naming the user and text "
                              "columns", path=path, line=1) from None
        except csv.Error as e:
            raise CorpusError(f"malformed CSV header ({e})", path=path, line=1) from None
        for name in (self.user_field, self.text_field):
            if header.count(name) > 1:
                raise CorpusError("the header names this column twice; which one holds the "
                                  "data is ambiguous. Rename one", path=path, line=1,
                                  field=name)
            if name not in header:
                # the first row is not quoted: without a header it would be a private record
                also = [n for n in (self.user_field, self.text_field)
                        if n != name and n not in header]
                raise CorpusError("column missing from the header (line 1 must name the "
                                  "columns)" + (f", and so is {also[0]!r}" if also else "")
                                  + "; set user_field and text_field to the header's names "
                                  "(--corpus.user_field NAME --corpus.text_field NAME on the "
                                  "command line)", path=path, line=1, field=name)
        ui, ti = header.index(self.user_field), header.index(self.text_field)
        while True:
            start = reader.line_num + 1  # a record may span lines: report where it starts
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                if "unexpected end of data" in str(e):
                    # strict mode: the file ended inside a quoted field; nothing can follow
                    self.report_bad("malformed CSV: a quoted field opened in the record starting "
                                    "here is never closed (unterminated quote)", start)
                    break
                if "field larger than field limit" in str(e):
                    self.report_bad(f"a field longer than max_line_bytes = {self.max_line_bytes} "
                                    f"bytes (often an unbalanced quote); raise max_line_bytes if "
                                    f"such documents are expected", start)
                    continue
                self.report_bad(f"malformed CSV ({e})", start)
                continue
            if not row:
                continue
            if len(row) != len(header):
                self.report_bad(f"expected {len(header)} columns, found {len(row)}", start)
                continue
            user = _check_user(self, row[ui], self.user_field, start)
            text = _check_text(self, row[ti], self.text_field, start) \
                if user is not None else None
            if text is not None:
                yield user, text


class TextDirReader(_Reader):
    """A folder of UTF-8 text files: one user per file (``user_per = "file"``, id = relative
    path without suffix) or per sub-folder (``user_per = "folder"``, every file below it).
    ``pattern`` is a glob relative to the folder. A file larger than ``max_file_bytes``
    (after decompression) is an error (or a skip), never read whole."""

    def __init__(self, path, pattern: str = "*.txt", user_per: str = "file",
                 on_error: str = "raise", max_file_bytes: int = DEFAULT_MAX_FILE_BYTES):
        super().__init__(path, on_error, kind="dir")
        self.unit = "file"
        if not isinstance(pattern, str) or not pattern or Path(pattern).is_absolute() \
                or ".." in Path(pattern).parts:
            raise ParameterError("pattern", pattern, "a glob relative to the corpus folder, "
                                 "e.g. \"*.txt\" or \"**/*.md\"", "Put the folder in path.")
        self.pattern = pattern
        self.user_per = check_choice(user_per, "user_per", ("file", "folder"))
        self.max_file_bytes = check_positive_int(max_file_bytes, "max_file_bytes",
                                                 maximum=2 ** 40)
        self._done = self._total = 0

    def _files(self) -> list[Path]:
        try:
            return sorted(p for p in self.path.rglob(self.pattern) if p.is_file())
        except (ValueError, NotImplementedError) as e:
            raise ParameterError("pattern", self.pattern, f"a valid relative glob "
                                 f"({type(e).__name__})") from None

    def progress(self) -> tuple[int, int]:
        """(bytes of the files read, bytes of all files), like the file readers' progress."""
        return self._done, self._total

    def describe(self) -> dict:
        user = f"one file matching {self.pattern!r}, named by its path below the folder" \
            if self.user_per == "file" else \
            f"one sub-folder, with every file below it that matches {self.pattern!r}"
        return {**super().describe(), "pattern": self.pattern, "user_per": self.user_per,
                "user": user}

    def _read(self, p: Path) -> bytes | None:
        """The file's bytes, at most max_file_bytes after decompression."""
        limit = self.max_file_bytes
        try:
            raw, stream = _open_binary(p)
            with raw, stream:
                data = stream.read(limit + 1)
        except _DECOMPRESS_ERRORS as e:
            if isinstance(e, OSError) and e.errno is not None:  # permissions, I/O
                raise CorpusError(f"cannot read ({e.strerror})", path=p) from None
            self.report_bad(f"the compressed stream is corrupt ({_decompress_reason(e)})", path=p)
            return None
        if len(data) > limit:
            self.report_bad(f"file longer than max_file_bytes = {limit} bytes; raise "
                            f"max_file_bytes if such documents are expected", path=p)
            return None
        return data

    def __iter__(self) -> Iterator[tuple[object, str]]:
        files = self._files()
        if not files:   # a fact about the folder's names and the recipe's pattern
            raise CorpusError(f"no file in the folder matches pattern {self.pattern!r}. Set "
                              f"[corpus] pattern, e.g. \"**/*.md\" (--corpus.pattern '**/*.md' "
                              f"on the command line)", path=self.path)
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
            data = self._read(p)
            if data is None:
                continue
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as e:
                line = data[:e.start].count(b"\n") + 1
                self.report_bad(f"not valid UTF-8 ({e.reason})", line, path=p)
                continue
            if not text.strip():
                self.skip("empty document, skipped", path=p)
                continue
            yield user, text
