"""Corpus readers: formats, compression, and bad input with file:line:field messages."""

import bz2
import gzip
import json
import lzma

import pytest

from dp_vocab.ingest.corpora import CsvReader, JsonlReader, TextDirReader
from dp_vocab.ingest.corpora.readers import MixedUserIdWarning
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
    (b'{"text": "ok"}\n', r"c.jsonl:1: field 'user': missing \(set user_field"),
    (b'{"author": "a", "body": "ok"}\n', r"c.jsonl:1: field 'user': missing, and so is field "
                                        r"'text' \(set user_field and text_field to the keys"),
    (b'{"user": "a", "text": "caf\xe9"}\n', r"c.jsonl:1: not valid UTF-8"),
    (b'[1, 2]\n', r"c.jsonl:1: expected a JSON object, found a JSON list"),
    (b'{"user": null, "text": "x"}\n', r"c.jsonl:1: field 'user': expected a non-empty string"),
    (b'{"user": "a", "text": 5}\n', r"c.jsonl:1: field 'text': expected a string, found a number"),
    (b'{"user": "a", "text": "ok"}\n"just a string"\n', r"c.jsonl:2: expected a JSON object"),
    # a line cut short inside a string: said so, not "invalid control character" (the newline)
    (b'{"user": "a", "text": "cut sh\n{"user": "b", "text": "ok"}\n',
     r"c.jsonl:1: not valid JSON \(string not closed before the end of the line, column 30\)"),
    (b'{"user": "a", "text": "tab\there"}\n', r"c.jsonl:1: not valid JSON \(Invalid control "
                                            r"character, column 27\)"),
    # a field given twice: which one counts differs between JSON readers
    (b'{"user": "a", "text": "x", "user": "b"}\n', r"c.jsonl:1: field 'user': given twice"),
    (b'{"user": "a", "text": "x", "te\\u0078t": "y"}\n', r"c.jsonl:1: field 'text': given twice"),
]


def test_the_duplicate_check_parses_at_the_depth_of_a_plain_parse(tmp_path):
    """A line nested as deep as json takes is read whether or not its keys are watched (the
    check once parsed a second time, one frame deeper: a RecursionError past on_error)."""
    import sys
    p = tmp_path / "c.jsonl"
    ok = b'{"user":"b","text":"ok"}\n'
    for depth in range(sys.getrecursionlimit() - 120, sys.getrecursionlimit() + 20, 4):
        for escape in (b"x", b"x\\u00e9"):   # a \u escape makes the check watch the keys
            p.write_bytes(b'{"user":"a","text":"' + escape + b'","m":' + b"[" * depth +
                          b"]" * depth + b"}\n" + ok)
            r = JsonlReader(p, on_error="skip")
            docs = list(r)
            assert docs[-1] == ("b", "ok") and len(docs) + r.skipped == 2
            assert r.skipped == 0 or "nested too deeply" in r.skip_reasons[0]


def test_only_the_objects_own_fields_count_as_given_twice(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"user": "a", "text": "say \\"user\\": \\u00e9", "m": {"text": 1, "text": 2}}\n')
    assert list(JsonlReader(p)) == [("a", 'say "user": \u00e9')]
    # a line json reads as UTF-16 is watched too
    p.write_bytes('{"user":"a","text":"x","user":"b"}'.encode("utf-16"))
    with pytest.raises(CorpusError, match="field 'user': given twice"):
        list(JsonlReader(p))


@pytest.mark.parametrize("content,message", BAD_LINES)
def test_jsonl_bad_input_names_file_line_field(tmp_path, content, message):
    p = tmp_path / "c.jsonl"
    p.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        list(JsonlReader(p))


def test_jsonl_empty_documents_are_skipped_not_errors(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"user": "a", "text": "ok"}\n{"user": "b", "text": "  \\n "}\n'
                  b'{"user": "c", "text": ""}\n{"user": "d", "text": "fine"}\n')
    r = JsonlReader(p)
    assert list(r) == [("a", "ok"), ("d", "fine")]
    assert r.skipped == 2 and r.skip_reasons[1] == f"{p}:3: field 'text': empty document, skipped"


def test_jsonl_skip_mode_counts_and_keeps_reasons(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"user": "a", "text": "ok"}\nnot json\n\n{"user": "b"}\n{"user": "c", "text": "fine"}\n')
    r = JsonlReader(p, on_error="skip")
    assert list(r) == [("a", "ok"), ("c", "fine")]
    assert r.skipped == 2 and "c.jsonl:2" in r.skip_reasons[0]


def test_missing_file_and_bad_option(tmp_path):
    with pytest.raises(CorpusError, match="corpus file not found"):
        JsonlReader(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError,
                       match="expected a corpus file, found a folder.*text-folder reader"):
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
    (tmp_path / "carol.txt").write_text(" \n ", encoding="utf-8")   # an empty document
    r = TextDirReader(tmp_path)
    assert sorted(r) == [("alice/1", "hello"), ("alice/2", "again"), ("bob", "bob here")]
    assert r.skipped == 1 and r.skip_reasons == [f"{tmp_path / 'carol.txt'}: empty document, "
                                                 f"skipped"]
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(CorpusError, match=r"bad.txt:2: not valid UTF-8"):
        list(TextDirReader(tmp_path))


def test_glob_of_files_and_users_spread_across_them(tmp_path):
    from dp_vocab import ItemSets
    from dp_vocab.ingest.extract import extract_itemsets
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


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_shares_of_a_file_hold_every_line_once_with_the_files_line_numbers(tmp_path, suffix,
                                                                          monkeypatch):
    """A one-file input split between Dask workers: the lines starting in each byte range,
    wherever the ranges fall (inside a line, on a line start, inside an over-long line), read
    line by line and as columns, give the whole file's documents, skips and errors."""
    import copy

    from dp_vocab.ingest.corpora import columns
    monkeypatch.setattr(columns, "CHUNK_BYTES", 64)
    lines = [json.dumps({"user": f"u{i % 4}", "text": f"doc {i} " + "x" * (i % 7)})
             for i in range(30)]
    lines[11] = '{"user": "u9", "text": "' + "y" * 300 + '"}'   # over max_line_bytes
    lines[17] = "not json"
    data = ("\n".join(lines)).encode()   # no final line feed
    path = tmp_path / f"c{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)

    def docs(reader, columnar):
        if not columnar:
            return list(reader)
        return [d for users, texts in reader.frames()
                for d in zip(users if isinstance(users, list) else users.to_list(),
                             texts.to_list())]

    for columnar in (False, True):
        whole = JsonlReader(path, on_error="skip", max_line_bytes=200)
        expected = docs(whole, columnar)
        with pytest.raises(CorpusError) as first_error:
            docs(JsonlReader(path, max_line_bytes=200), columnar)
        starts = [0] + [len(data[:k]) for k in range(1, len(data)) if data[k - 1:k] == b"\n"]
        for cut in sorted({1, 5, 40, starts[11], starts[11] + 50, starts[17], starts[17] + 3,
                           starts[20], len(data) - 2, len(data) + 10}):
            got, skipped, reasons = [], 0, []
            for share in ((0, cut), (cut, None)):
                r = JsonlReader(path, on_error="skip", max_line_bytes=200)
                r.line_range = share
                got += docs(r, columnar)
                skipped += r.skipped
                reasons += r.skip_reasons
            assert got == expected, (columnar, cut)
            assert skipped == whole.skipped and reasons == whole.skip_reasons
            raising = JsonlReader(path, max_line_bytes=200)
            raising.line_range = (cut, None) if cut <= starts[11] else (0, cut)
            with pytest.raises(CorpusError) as share_error:   # the share holding line 12
                docs(copy.copy(raising), columnar)
            assert str(share_error.value) == str(first_error.value)


def test_a_line_range_read_by_read_alone_ends_on_a_whole_line():
    import io

    from dp_vocab.ingest.corpora.line_range import LineRange
    data = b"aa\nbbbbbb\ncc\ndd"
    for start, end, expected in [(0, 5, b"aa\nbbbbbb\n"), (1, 5, b"bbbbbb\n"),
                                 (3, 10, b"bbbbbb\n"), (5, None, b"cc\ndd"), (0, 3, b"aa\n")]:
        r = LineRange(io.BytesIO(data), start, end)
        got = b"".join(iter(lambda: r.read(2), b""))
        assert got == expected, (start, end)


def test_files_whose_names_say_another_format_are_not_read_as_json_lines(tmp_path):
    for name, reader in (("c.csv", "csv"), ("c.parquet", "parquet"), ("c.arrow.gz", "arrow")):
        (tmp_path / name).write_bytes(b"user,text\na,b\n")
        with pytest.raises(CorpusError, match=rf"{name}: the file's name says {reader.upper()}.*"
                                              rf"dp_vocab\.{reader}\.v1"):
            JsonlReader(tmp_path / name)
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(b'{"user": "a", "text": "b"}\n'))
    assert list(JsonlReader(tmp_path / "c.jsonl.gz")) == [("a", "b")]


def test_csv_structure_errors_name_the_header(tmp_path):
    p = tmp_path / "c.csv"
    p.write_bytes(b"")
    with pytest.raises(CorpusError, match=r"c\.csv:1: empty file: expected a header row"):
        list(CsvReader(p))
    p.write_bytes(b"user,text,text\na,b,c\n")   # which "text" holds the document?
    with pytest.raises(CorpusError, match=r"c\.csv:1: field 'text': the header names this "
                                          r"column twice"):
        list(CsvReader(p))


def test_a_text_folder_pattern_that_matches_nothing_is_an_error(tmp_path):
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"no file in the folder matches pattern '\*\.md'"):
        list(TextDirReader(tmp_path, pattern="*.md"))
