"""Columnar inputs: Parquet and Arrow (IPC / Feather) files, and in-memory DataFrames.

Each yields its documents as polars columns a record batch at a time (bounded memory: Parquet row
groups and Arrow batches are read one by one, Arrow files memory-mapped), validated like the text
readers: a missing column or a column of the wrong type is an error naming file and field; a null
or empty user id, or a null or blank text, names file, row (1-based, counted over the file's
rows) and field, and is an error or, with ``on_error = "skip"``, a skipped row. Messages describe
values by kind, never by content.

User ids are strings or integers, as in JSONL: integer columns keep integer ids, so ``7`` in an
integer column and ``"7"`` in a string column of another file are two users (a warning says so).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from pathlib import Path

from ...errors import CorpusError, ParameterError
from ...privacy.params import check_name, check_positive_int
from .compression import corrupt_stream
from .readers import _DECOMPRESS_ERRORS, _open_binary, _Reader

BATCH_ROWS = 65_536
_BLANK = r"^[\s\x1C-\x1F]*$"     # str.isspace() characters only, as str.strip() sees them


class _TableReader(_Reader):
    """Shared validation of (user, text) columns; subclasses yield pyarrow record batches."""

    def __init__(self, path, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", batch_rows: int = BATCH_ROWS, kind: str = "file"):
        super().__init__(path, on_error, kind)
        self.unit = "row"
        self.user_field = check_name(user_field, "user_field")
        self.text_field = check_name(text_field, "text_field")
        self.batch_rows = check_positive_int(batch_rows, "batch_rows", maximum=2 ** 24)

    def _batches(self, path: Path) -> Iterator:
        raise NotImplementedError

    def frames(self) -> Iterator[tuple[Any, Any]]:
        """(users, texts) polars Series per record batch, bad rows reported or skipped."""
        for f in self.files:
            self._current = f
            row = 0
            for batch in self._batches(f):
                checked = check_columns(self, batch, row, f)
                row += batch.num_rows
                if checked is not None:
                    yield checked
            self._finished_bytes += f.stat().st_size
        self._current = None

    def __iter__(self) -> Iterator[tuple[object, str]]:
        for users, texts in self.frames():
            yield from zip(users.to_list(), texts.to_list())


class ParquetReader(_TableReader):
    """Parquet files (a file or a glob), read a row group batch at a time; only the user and
    text columns are read."""

    def _batches(self, path: Path) -> Iterator:
        import pyarrow as pa
        import pyarrow.parquet as pq
        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as e:
            raise CorpusError(f"not a readable Parquet file ({type(e).__name__})",
                              path=path) from None
        _check_schema(pf.schema_arrow, self, path)
        try:
            yield from pf.iter_batches(batch_size=self.batch_rows,
                                       columns=[self.user_field, self.text_field])
        except (pa.ArrowException, OSError) as e:
            raise CorpusError(f"the Parquet data is corrupt or unreadable "
                              f"({type(e).__name__})", path=path) from None


class ArrowReader(_TableReader):
    """Arrow IPC files (``.arrow``, ``.feather`` v2: memory-mapped) or streams (also
    ``.gz``/``.bz2``/``.xz``-compressed); buffer compression inside the file is read as is."""

    def _batches(self, path: Path) -> Iterator:
        import pyarrow as pa
        import pyarrow.ipc as ipc
        try:
            if path.suffix.lower() in (".gz", ".bz2", ".xz"):
                raw, stream = _open_binary(path)
                with raw, stream:
                    reader = ipc.open_stream(stream)
                    _check_schema(reader.schema, self, path)
                    yield from _select(reader, self)
                return
            with pa.memory_map(str(path)) as source:
                try:
                    reader = ipc.open_file(source)
                    _check_schema(reader.schema, self, path)
                    for i in range(reader.num_record_batches):
                        yield from _slices(reader.get_batch(i), self)
                    return
                except pa.ArrowInvalid:
                    source.seek(0)
                reader = ipc.open_stream(source)
                _check_schema(reader.schema, self, path)
                yield from _select(reader, self)
        except (pa.ArrowException, OSError) as e:
            if isinstance(e, _DECOMPRESS_ERRORS) and not isinstance(e, pa.ArrowException) \
                    and path.suffix.lower() in (".gz", ".bz2", ".xz"):
                raise corrupt_stream(path, e) from None
            raise CorpusError(f"not a readable Arrow IPC file or stream ({type(e).__name__})",
                              path=path) from None


def _select(reader, table_reader) -> Iterator:
    for batch in reader:
        yield from _slices(batch, table_reader)


def _slices(batch, table_reader) -> Iterator:
    cols = batch.select([table_reader.user_field, table_reader.text_field])
    for start in range(0, cols.num_rows, table_reader.batch_rows):
        yield cols.slice(start, table_reader.batch_rows)


class FrameReader(_TableReader):
    """An in-memory table: a pandas or polars DataFrame, or a Hugging Face ``datasets.Dataset``.

    Errors name the frame (``<DataFrame>``), row (1-based position) and field."""

    def __init__(self, frame, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", batch_rows: int = BATCH_ROWS):
        _check_frame(frame)
        super().__init__(f"<{type(frame).__name__}>", user_field, text_field, on_error,
                         batch_rows, kind="memory")
        self.frame = frame

    def frames(self) -> Iterator[tuple[Any, Any]]:
        row = 0
        for batch in self._frame_batches():
            checked = check_columns(self, batch, row, self.path)
            row += batch.num_rows
            if checked is not None:
                yield checked

    def _frame_batches(self) -> Iterator:
        frame, uf, tf = self.frame, self.user_field, self.text_field
        kind = type(frame).__module__.split(".")[0]
        if kind == "polars":
            _check_names(list(frame.columns), self)   # names are unique in a polars frame
            table = frame.select(uf, tf).to_arrow()
        elif kind == "pandas":
            names = [str(c) for c in frame.columns]
            _check_names(names, self)
            for name in (uf, tf):
                _check_once(names.count(name), self.path, name)
            table = _pandas_table(frame, self)
        elif kind == "datasets":
            _check_names(list(frame.column_names), self)   # names are unique in a Dataset
            arrow = frame.select_columns([uf, tf]).with_format("arrow")
            _check_schema(arrow.features.arrow_schema, self, self.path)
            for start in range(0, arrow.num_rows, self.batch_rows):
                yield from arrow[start:start + self.batch_rows].to_batches()
            return
        else:
            raise ParameterError("frame", type(frame).__name__, "a pandas or polars DataFrame "
                                 "or a Hugging Face datasets.Dataset")
        if table.num_rows:   # an empty pandas column has no type to check (float64)
            _check_schema(table.schema, self, self.path)
        for batch in table.to_batches(max_chunksize=self.batch_rows):
            yield batch

    def progress(self) -> tuple[int, int]:
        return 0, 0


def _pandas_table(frame, reader: FrameReader):
    import pyarrow as pa
    cols = {}
    for name in (reader.user_field, reader.text_field):
        (column,) = [c for c in frame.columns if str(c) == name]   # one (_check_once)
        try:
            cols[name] = pa.array(frame[column], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise CorpusError("expected one kind of value per column (strings, or integers for "
                              "user ids), found a column of mixed types; convert it, e.g. "
                              "df[col].astype(str)", path=reader.path, field=name) from None
    return pa.table(cols)


# kinds of table that are not one in-memory table, and what to do with each
_NOT_A_FRAME = {"LazyFrame": "call .collect() first",
                "DatasetDict": "pick a split, e.g. ds[\"train\"]",
                "IterableDatasetDict": "pick a split and load it without streaming",
                "IterableDataset": "load it without streaming (a datasets.Dataset)"}


def _check_frame(frame) -> None:
    """A pandas or polars DataFrame or a datasets.Dataset, or a ParameterError with the fix."""
    kind, module = type(frame).__name__, type(frame).__module__.split(".")[0]
    if kind in _NOT_A_FRAME:
        raise ParameterError("frame", f"a {module} {kind}", "one in-memory table",
                             _NOT_A_FRAME[kind][0].upper() + _NOT_A_FRAME[kind][1:] + ".")
    if not ((module == "pandas" and kind.endswith("DataFrame")) or
            (module, kind) in (("polars", "DataFrame"), ("datasets", "Dataset"))):
        raise ParameterError("frame", f"a {module} {kind}", "a pandas or polars DataFrame, or "
                             "a datasets.Dataset")


def _check_names(names: list, reader: _TableReader) -> None:
    for name, setting in ((reader.user_field, "user_field"), (reader.text_field, "text_field")):
        if name not in names:
            how = f"pass {setting.split('_')[0]}=\"...\" naming" \
                if isinstance(reader, FrameReader) else f"set {setting} to"
            raise CorpusError(f"column missing; {how} the column that holds the "
                              f"{'user id' if setting == 'user_field' else 'text'}",
                              path=reader.path, field=name)


def _check_schema(schema, reader: _TableReader, path) -> None:
    import pyarrow as pa
    names = list(schema.names)
    for name, setting in ((reader.user_field, "user_field"), (reader.text_field, "text_field")):
        if name not in names:
            raise CorpusError(f"column missing; set {setting} to the column that holds the "
                              f"{'user id' if setting == 'user_field' else 'text'}",
                              path=path, field=name)
        _check_once(names.count(name), path, name)
    user_type = schema.field(reader.user_field).type
    if pa.types.is_dictionary(user_type) and pa.types.is_integer(user_type.value_type):
        user_type = user_type.value_type   # categorical integer ids: decoded (check_columns)
    if not (_is_string(user_type) or pa.types.is_integer(user_type)
            or pa.types.is_null(user_type)):
        hint = ("; integer ids with a missing value become floats in pandas: convert with "
                "df[col].astype(\"Int64\") (then fix or skip the missing ones) or .astype(str)"
                if pa.types.is_floating(user_type) else "")
        raise CorpusError(f"expected a column of strings or integers (user ids), found a "
                          f"column of type {user_type}{hint}", path=path,
                          field=reader.user_field)
    text_type = schema.field(reader.text_field).type
    if not (_is_string(text_type) or pa.types.is_null(text_type)):
        raise CorpusError(f"expected a column of strings, found a column of type {text_type}",
                          path=path, field=reader.text_field)


def _check_once(count: int, path, name: str) -> None:
    if count > 1:
        raise CorpusError(f"expected one column of this name, found {count}; rename or drop "
                          f"the others", path=path, field=name)


def _is_string(t) -> bool:
    import pyarrow as pa
    return pa.types.is_string(t) or pa.types.is_large_string(t) or \
        getattr(pa.types, "is_string_view", lambda _: False)(t) or \
        (pa.types.is_dictionary(t) and _is_string(t.value_type))


def check_columns(reader: _TableReader, batch, first_row: int, path):
    """A record batch's (users, texts) as polars Series with bad rows reported (or dropped);
    None when no row is left."""
    import polars as pl
    import pyarrow as pa
    uf, tf = reader.user_field, reader.text_field
    _check_schema(batch.schema, reader, path)
    user_type = batch.schema.field(uf).type
    if pa.types.is_dictionary(user_type) and pa.types.is_integer(user_type.value_type):
        batch = pa.record_batch([batch.column(uf).dictionary_decode(), batch.column(tf)],
                                names=[uf, tf])
    df = pl.from_arrow(batch)
    if not isinstance(df, pl.DataFrame):
        df = df.to_frame()
    users, texts = df[uf], df[tf]
    if users.dtype == pl.Categorical or users.dtype == pl.Enum:
        users = users.cast(pl.String)
    if texts.dtype == pl.Categorical or texts.dtype == pl.Enum:
        texts = texts.cast(pl.String)
    if users.dtype == pl.Null:
        users = users.cast(pl.String)
    if texts.dtype == pl.Null:
        texts = texts.cast(pl.String)
    if users.dtype.is_integer() and users.dtype != pl.Int64:
        try:
            users = users.cast(pl.Int64, strict=True)
        except pl.exceptions.InvalidOperationError:
            raise CorpusError("expected integer user ids within the 64-bit signed range, found "
                              "larger ones; store them as strings", path=path,
                              field=uf) from None
    bad_user = users.is_null()
    if users.dtype == pl.String:
        bad_user = bad_user | (users.str.len_bytes() == 0)
    null_text = texts.is_null()
    blank = texts.str.contains(_BLANK).fill_null(False)
    bad = bad_user | (~bad_user & (null_text | blank))
    if bad.any():
        for i in bad.arg_true().to_list():
            row = first_row + i + 1
            if bad_user[i]:
                found = "null" if users[i] is None else "an empty string"
                reader.report_bad(f"expected a non-empty string or integer user id, found {found}",
                                  row, uf, path=path)
            elif null_text[i]:
                reader.report_bad("expected a string, found null", row, tf, path=path)
            else:   # an empty document is no error: it holds no words
                reader.skip("empty document, skipped", row, tf, path=path)
        keep = ~bad
        users, texts = users.filter(keep), texts.filter(keep)
    if not len(users):
        return None
    reader.note_id_kind(0 if users.dtype == pl.Int64 else "")
    return users, texts.rename("text")
