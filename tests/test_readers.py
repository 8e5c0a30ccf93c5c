"""Corpus readers: formats, compression, and bad input with file:line:field messages."""

import bz2
import gzip
import json
import lzma

import pytest

from dp_vocab.corpora import CsvReader, JsonlReader, TextDirReader
from dp_vocab.corpora.readers import MixedUserIdWarning
from dp_vocab.errors import CorpusError, ParameterError


def write_jsonl(path, rows, opener=open):
    with opener(path, "wb") as f:
        for r in rows:
            f.write(r if isinstance(r, bytes) else (json.dumps(r) + "\n").encode())


@pytest.mark.parametrize("suffix,opener", [("", open), (".gz", gzip.open), (".bz2", bz2.open),
                                           (".xz", lzma.open)])
def test_jsonl_compressed_and_custom_fields(tmp_path, suffix, opener):
    p = tmp_path / f"c.jsonl{suffix}"
    write_jsonl(p, [{"author": "a", "body": "hi there"}, {"author": 7, "body": "x"}], opener)
    r = JsonlReader(p, user_field="author", text_field="body")
    with pytest.warns(MixedUserIdWarning, match="two different users"):  # names no id
        assert list(r) == [("a", "hi there"), (7, "x")]
    assert r.progress() == (p.stat().st_size, p.stat().st_size)


BAD_LINES = [
    (b'{"user": "a", "text": "ok"}\n{"user": "b", "text": \n', r"c.jsonl:2: not valid JSON"),
    (b'{"user": "a", "text": "ok"}\n{"user": "b"}\n', r"c.jsonl:2: field 'text': missing"),
    (b'{"text": "ok"}\n', r"c.jsonl:1: field 'user': missing"),
    (b'{"user": "a", "text": "caf\xe9"}\n', r"c.jsonl:1: not valid UTF-8"),
    (b'{"user": "a", "text": "   "}\n', r"c.jsonl:1: field 'text': empty document"),
    (b'[1, 2]\n', r"c.jsonl:1: expected a JSON object, found a JSON list"),
    (b'{"user": null, "text": "x"}\n', r"c.jsonl:1: field 'user': expected a non-empty string"),
    (b'{"user": "a", "text": 5}\n', r"c.jsonl:1: field 'text': expected a string, found a number"),
    (b'{"user": "a", "text": "ok"}\n"just a string"\n', r"c.jsonl:2: expected a JSON object"),
]


@pytest.mark.parametrize("content,message", BAD_LINES)
def test_jsonl_bad_input_names_file_line_field(tmp_path, content, message):
    p = tmp_path / "c.jsonl"
    p.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        list(JsonlReader(p))


def test_jsonl_skip_mode_counts_and_keeps_reasons(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"user": "a", "text": "ok"}\nnot json\n\n{"user": "b"}\n{"user": "c", "text": "fine"}\n')
    r = JsonlReader(p, on_error="skip")
    assert list(r) == [("a", "ok"), ("c", "fine")]
    assert r.skipped == 2 and "c.jsonl:2" in r.skip_reasons[0]


def test_missing_file_and_bad_option(tmp_path):
    with pytest.raises(CorpusError, match="corpus file not found"):
        JsonlReader(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError, match="directory"):
        JsonlReader(tmp_path)
    (tmp_path / "x.jsonl").write_text("")
    with pytest.raises(ParameterError, match="on_error"):
        JsonlReader(tmp_path / "x.jsonl", on_error="ignore")


def test_truncated_gzip_is_a_corpus_error(tmp_path):
    p = tmp_path / "c.jsonl.gz"
    write_jsonl(p, [{"user": str(i), "text": "word " * 50} for i in range(2000)], gzip.open)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match="compressed stream is corrupt"):
        list(JsonlReader(p))


def test_csv(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('user,text\na,"hello, world"\nb,"multi\nline"\n', encoding="utf-8")
    assert list(CsvReader(p)) == [("a", "hello, world"), ("b", "multi\nline")]
    p.write_text("user,body\na,x\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c.csv:1: field 'text': column missing"):
        list(CsvReader(p))
    p.write_text("user,text\na,x,extra\nb,\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c.csv:2: expected 2 columns"):
        list(CsvReader(p))
    r = CsvReader(p, on_error="skip")
    assert list(r) == [] and r.skipped == 2


def test_text_folder_per_file_and_per_folder(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "1.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "alice" / "2.txt").write_text("again", encoding="utf-8")
    (tmp_path / "bob.txt").write_text("bob here", encoding="utf-8")
    assert sorted(TextDirReader(tmp_path)) == [("alice/1", "hello"), ("alice/2", "again"),
                                               ("bob", "bob here")]
    assert sorted(TextDirReader(tmp_path, user_per="folder")) == [("alice", "again"),
                                                                  ("alice", "hello")]
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(CorpusError, match=r"bad.txt:2: not valid UTF-8"):
        list(TextDirReader(tmp_path))


def test_glob_of_files_and_users_spread_across_them(tmp_path):
    from dp_vocab import ItemSets
    from dp_vocab.extraction import extract_itemsets
    write_jsonl(tmp_path / "a.jsonl", [{"user": "u1", "text": "hello"}, {"user": "u2", "text": "x"}])
    write_jsonl(tmp_path / "b.jsonl.gz", [{"user": "u1", "text": "again"}], gzip.open)
    r = JsonlReader(tmp_path / "*.jsonl*")
    assert list(r) == [("u1", "hello"), ("u2", "x"), ("u1", "again")]
    done, total = r.progress()
    assert done == total == sum(p.stat().st_size for p in tmp_path.iterdir())
    s = extract_itemsets(JsonlReader(tmp_path / "*.jsonl*"), str.split)
    assert isinstance(s, ItemSets) and s.to_dict() == {"u1": {"hello": 1, "again": 1},
                                                       "u2": {"x": 1}}
    (tmp_path / "c.jsonl").write_text('{"user": "u3"}\n')
    with pytest.raises(CorpusError, match=r"c.jsonl:1: field 'text'"):
        list(JsonlReader(tmp_path / "*.jsonl*"))
    with pytest.raises(CorpusError, match="no file matches"):
        JsonlReader(tmp_path / "*.parquet")
