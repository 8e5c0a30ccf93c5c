"""Parquet and Arrow readers, DataFrames and datasets: same documents and the same kind of
errors as the text readers (file, row, field; never a value)."""

import gzip
import json
import warnings

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

import pytest

from dp_vocab import itemsets_from_frame
from dp_vocab.ingest.corpora import ArrowReader, FrameReader, JsonlReader, ParquetReader
from dp_vocab.errors import CorpusError
from dp_vocab.ingest.extract import extract_itemsets
from dp_vocab.registry import registry
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import RegexTokenizer

SECRET = "Alice Secret"
DOCS = [("a", "The cat sat."), ("b", "the dog"), ("a", "A cat!"), ("c", "Dogs and cats")]


def table(docs=DOCS, user="user", text="text"):
    return pa.table({user: [u for u, _ in docs], text: [t for _, t in docs]})


def write_all(tmp_path, t) -> dict:
    paths = {"parquet": tmp_path / "c.parquet", "feather": tmp_path / "c.feather",
             "stream": tmp_path / "c.arrows", "stream_gz": tmp_path / "c.arrows.gz"}
    pq.write_table(t, paths["parquet"], row_group_size=2)
    feather.write_feather(t, paths["feather"], compression="zstd", chunksize=3)
    with ipc.new_stream(paths["stream"], t.schema) as w:
        w.write_table(t)
    with gzip.open(paths["stream_gz"], "wb") as g, ipc.new_stream(g, t.schema) as w:
        w.write_table(t)
    return paths


def reader_for(kind, path, **kw):
    return ParquetReader(path, **kw) if kind == "parquet" else ArrowReader(path, **kw)


@pytest.mark.parametrize("kind", ["parquet", "feather", "stream", "stream_gz"])
def test_tables_read_like_jsonl_and_extract_the_same_items(tmp_path, kind):
    path = write_all(tmp_path, table())[kind]
    r = reader_for(kind, path, batch_rows=3)
    assert list(r) == DOCS
    j = tmp_path / "c.jsonl"
    j.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in DOCS))
    ex = ItemExtractor(RegexTokenizer())
    assert extract_itemsets(reader_for(kind, path), ex).to_dict() == \
        extract_itemsets(JsonlReader(j), ex).to_dict()


def test_registered_readers_and_globs(tmp_path):
    pq.write_table(table(DOCS[:2]), tmp_path / "p1.parquet")
    pq.write_table(table(DOCS[2:]), tmp_path / "p2.parquet")
    r = registry.readers.get("dp_vocab.parquet.v1")(str(tmp_path / "p*.parquet"))
    assert list(r) == DOCS
    feather.write_feather(table(), tmp_path / "c.arrow")
    assert list(registry.readers.get("dp_vocab.arrow.v1")(str(tmp_path / "c.arrow"))) == DOCS


def test_integer_user_ids_stay_integers(tmp_path):
    pq.write_table(pa.table({"user": pa.array([7, 8], pa.int32()), "text": ["x", "y"]}),
                   tmp_path / "c.parquet")
    assert list(ParquetReader(tmp_path / "c.parquet")) == [(7, "x"), (8, "y")]


@pytest.mark.parametrize("kind", ["parquet", "feather"])
def test_bad_tables_name_file_row_and_field_never_the_value(tmp_path, kind):
    cases = [
        (pa.table({"author": ["a"], "text": [SECRET]}), r"field 'user': column missing; set "
         r"user_field"),
        (pa.table({"user": ["a"], "text": [1.5]}), r"field 'text': expected a column of "
         r"strings, found a column of type double"),
        (pa.table({"user": [[SECRET]], "text": ["x"]}), r"field 'user': expected a column of "
         r"strings or integers"),
        (pa.table({"user": ["a", None, "c"], "text": ["x", SECRET, "z"]}),
         r"c\.\w+:2: field 'user': expected a non-empty string or integer user id, found null"),
        (pa.table({"user": ["a", "b", "c"], "text": ["x", None, SECRET]}),
         r"c\.\w+:2: field 'text': expected a string, found null"),
        (pa.table({"user": ["a", "", "c"], "text": ["x", SECRET, "z"]}),
         r"c\.\w+:2: field 'user': .*found an empty string"),
    ]
    for t, message in cases:
        path = write_all(tmp_path, t)[kind]
        with pytest.raises(CorpusError, match=message) as e:
            list(reader_for(kind, path, batch_rows=2))
        assert SECRET not in str(e.value)


@pytest.mark.parametrize("on_error", ["raise", "skip"])
def test_empty_documents_are_skipped_not_errors(tmp_path, on_error):
    """A row of white space only holds no words (an empty __init__.py): counted as skipped,
    with its reason, whatever on_error says; the rows around it are read."""
    t = pa.table({"user": ["a", "b", "c", "d"], "text": ["x", "", " \u2028 ", "w"]})
    pq.write_table(t, tmp_path / "c.parquet")
    r = ParquetReader(tmp_path / "c.parquet", on_error=on_error)
    assert list(r) == [("a", "x"), ("d", "w")]
    assert r.skipped == 2
    assert r.skip_reasons == [f"{tmp_path / 'c.parquet'}:{n}: field 'text': empty document, "
                              f"skipped" for n in (2, 3)]


def test_skip_mode_counts_bad_rows(tmp_path):
    t = pa.table({"user": ["a", None, "c", "d"], "text": ["x", "y", "   ", "w"]})
    pq.write_table(t, tmp_path / "c.parquet")
    r = ParquetReader(tmp_path / "c.parquet", on_error="skip")
    assert list(r) == [("a", "x"), ("d", "w")]
    assert r.skipped == 2 and "c.parquet:2: field 'user'" in r.skip_reasons[0]


def test_not_a_table_file(tmp_path):
    (tmp_path / "c.parquet").write_bytes(b"PAR1 but not really " + SECRET.encode())
    with pytest.raises(CorpusError, match="not a readable Parquet file") as e:
        list(ParquetReader(tmp_path / "c.parquet"))
    assert SECRET not in str(e.value)
    (tmp_path / "c.arrow").write_bytes(b"nothing arrow " + SECRET.encode())
    with pytest.raises(CorpusError, match="not a readable Arrow IPC"):
        list(ArrowReader(tmp_path / "c.arrow"))


def test_frames_pandas_polars_datasets_give_the_same_item_sets():
    datasets = pytest.importorskip("datasets")
    df = pl.DataFrame({"author": [u for u, _ in DOCS], "body": [t for _, t in DOCS]})
    expected = extract_itemsets(DOCS, ItemExtractor(RegexTokenizer())).to_dict()
    for frame in (df, df.to_pandas(), datasets.Dataset.from_polars(df),
                  datasets.Dataset.from_polars(df).select([0, 1, 2, 3])):
        assert itemsets_from_frame(frame, user="author", text="body").to_dict() == expected


def test_frames_are_validated_like_files():
    cases = [
        (pd.DataFrame({"author": ["a", None], "body": ["x", SECRET]}),
         r"<DataFrame>, row 2 \(by position, from 1\): field 'author': expected a non-empty "
         r"string or integer user id"),
        (pd.DataFrame({"author": ["a", 7], "body": ["x", SECRET]}),
         r"field 'author': expected one kind of value per column"),
        (pl.DataFrame({"author": ["a", "b"], "body": ["x", None]}),
         r"<DataFrame>, row 2 \(by position, from 1\): field 'body': expected a string, "
         r"found null"),
        (pl.DataFrame({"author": ["a"], "text": [SECRET]}), r"field 'body': column missing"),
        (pd.DataFrame({"author": ["a"], "body": [3]}), r"field 'body': expected a column of "
         r"strings, found a column of type int64"),
    ]
    for frame, message in cases:
        with pytest.raises(CorpusError, match=message) as e:
            itemsets_from_frame(frame, user="author", text="body")
        assert SECRET not in str(e.value)
    r = FrameReader(pl.DataFrame({"user": ["a", "b"], "text": ["x", " "]}), on_error="skip")
    assert list(r) == [("a", "x")] and r.skipped == 1
    # the fix is said in the terms of the call that made the frame's reader, not a recipe's
    with pytest.raises(CorpusError, match=r'Fix the row, or pass on_error="skip" to skip such rows'):
        itemsets_from_frame(cases[0][0], user="author", text="body")


def test_rows_skipped_from_a_frame_are_counted_in_a_warning_naming_rows_not_text():
    from dp_vocab import SkippedDocumentsWarning
    # index labels 10, 20, ...: the row is named by its position
    frame = pd.DataFrame({"user": ["a", None, "b", "c", "d"],
                          "text": [SECRET, SECRET, "  ", "x", None]},
                         index=[10, 20, 30, 40, 50])
    with pytest.warns(SkippedDocumentsWarning, match=r"skipped 3 rows \(empty documents, and bad "
                      r"rows with on_error=\"skip\"\); the first: <DataFrame>, row 2 \(by "
                      r"position, from 1\): field 'user'") as caught:
        got = itemsets_from_frame(frame, on_error="skip")
    assert set(got.to_dict()) == {"a", "c"}
    assert all(SECRET not in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a frame with nothing skipped warns of nothing
        itemsets_from_frame(frame.iloc[[0, 3]], on_error="skip")


def test_tables_that_are_not_one_in_memory_frame_say_what_to_do():
    import datasets
    from dp_vocab.errors import ParameterError
    df = pl.DataFrame({"user": ["a"], "text": ["x"]})
    for frame, message in ((df.lazy(), r"polars LazyFrame'\. Call \.collect\(\) first"),
                           (datasets.DatasetDict({"train": datasets.Dataset.from_polars(df)}),
                            r"DatasetDict'\. Pick a split"),
                           ([("a", "x")], r"expected a pandas or polars DataFrame")):
        with pytest.raises(ParameterError, match=message):
            itemsets_from_frame(frame)
    with pytest.raises(CorpusError, match=r"field 'author': column missing; pass user=\"\.\.\.\""):
        itemsets_from_frame(df, user="author")
