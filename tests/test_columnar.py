"""Columnar extraction equals the Python extractor; JSONL read as columns equals line by line."""

import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab.bounding.user_order import encode_user_ids
from dp_vocab.ingest.corpora import JsonlReader, columns
from dp_vocab.ingest.corpora.readers import MixedUserIdWarning
from dp_vocab.errors import CorpusError
from dp_vocab.ingest.extract import extract_itemsets, extract_sequences
from dp_vocab.data.builder import ItemRowsBuilder
from dp_vocab.data.itemsets import ItemSets, item_hashes
from dp_vocab.ingest.text.columnar import SPACE, WORD, columnar_extractor, rust_pattern
from dp_vocab.ingest.text.items import _LONE_SURROGATE, ItemExtractor
from dp_vocab.ingest.text.tokenizers import DEFAULT_PATTERN, RegexTokenizer
from dp_vocab.ingest.corpora.bundled import SAMPLE

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("columnar")


def python_itemsets(docs, ex) -> ItemSets:
    b = ItemRowsBuilder(cap=ex.max_distinct_per_user)
    for user, text in docs:
        b.add(user, ex.iter_items(text))
    return ItemSets.from_rows(b.build())


@pytest.fixture(scope="module")
def sample_docs():
    return list(JsonlReader(SAMPLE))[:6000]


@pytest.fixture(scope="module")
def sample_file(sample_docs, tmp_path_factory):
    p = tmp_path_factory.mktemp("corpus") / "c.jsonl"
    p.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in sample_docs),
                 encoding="utf-8")
    return p


@pytest.mark.parametrize("kwargs", [
    {},
    {"n_min": 1, "n_max": 3, "joiner": "_"},
    {"n_min": 2, "n_max": 2, "max_length": 6},
    {"lowercase": False, "nfkc": False},
    {"n_max": 2, "max_distinct_per_user": 40},       # the cap, with its hash/string tie rule
])
def test_item_sets_equal_the_python_extractor(sample_docs, sample_file, kwargs):
    ex = ItemExtractor(RegexTokenizer(), **kwargs)
    assert columnar_extractor(ex) is not None
    fast = extract_itemsets(JsonlReader(sample_file), ex)   # the reader's own columns
    slow = python_itemsets(sample_docs, ex)
    assert fast.to_dict() == slow.to_dict()
    # hashed while interning (and kept through the cap's renumbering): the same hashes
    assert np.array_equal(fast.vocab.hashes(), item_hashes(fast.vocab.strings))
    assert fast.user_ids == slow.user_ids
    uncapped = ItemSets.from_user_items((u, ex(t)) for u, t in sample_docs)
    if uncapped.to_dict() == slow.to_dict():   # no user over the cap: the same ids too
        assert fast.vocab.strings == uncapped.vocab.strings   # (the capped Python builder
        assert np.array_equal(fast.items, uncapped.items)     # interns some items late)
    listed = extract_itemsets(sample_docs, ex)      # (user, text) pairs: Python-side batches
    assert listed.to_dict() == slow.to_dict()


def test_users_spread_over_batches_are_merged(monkeypatch, sample_docs):
    import dp_vocab.data.builder as builder
    import dp_vocab.ingest.extract as extraction
    monkeypatch.setattr(extraction, "BATCH_DOCS", 97)
    monkeypatch.setattr(builder, "COMPACT_PAIRS", 5000)
    docs = sample_docs[::2] + sample_docs[1::2]   # every user's documents far apart
    ex = ItemExtractor(RegexTokenizer(), n_max=2, max_distinct_per_user=30)
    assert extract_itemsets(docs, ex).to_dict() == python_itemsets(docs, ex).to_dict()


@pytest.mark.parametrize("ids", ["strings", "integers", "mixed"])
def test_users_spread_over_column_batches_keep_their_first_row(monkeypatch, tmp_path,
                                                                sample_docs, ids):
    """Batches of polars columns are numbered provisionally and merged at the end: the same
    item sets, user order and token runs as one pass of the Python extractor. "mixed": integer
    ids in some chunks, so chunks of both kinds come as lists (line by line) and columns."""
    monkeypatch.setattr(columns, "CHUNK_BYTES", 8192)
    names = sorted({u for u, _ in sample_docs})
    as_id = {"strings": lambda k: names[k],
             "integers": lambda k: k,
             "mixed": lambda k: k if k % 7 == 0 else names[k]}[ids]
    numbers = {u: k for k, u in enumerate(names)}
    docs = [(as_id(numbers[u]), t) for u, t in sample_docs[:1500]]
    docs = docs[::3] + docs[1::3] + docs[2::3]   # every user's documents far apart
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"user": u, "text": t}, ensure_ascii=False) + "\n"
                         for u, t in docs), encoding="utf-8")   # (\u escapes: line by line)
    ex = ItemExtractor(RegexTokenizer(), n_max=2, max_distinct_per_user=30)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixedUserIdWarning)
        fast = extract_itemsets(JsonlReader(p), ex)
        runs = extract_sequences(JsonlReader(p), ex)
    slow = python_itemsets(docs, ex)
    assert fast.to_dict() == slow.to_dict()
    assert np.array_equal(fast.vocab.hashes(), item_hashes(fast.vocab.strings))
    assert fast.user_ids == slow.user_ids == list(dict.fromkeys(u for u, _ in docs))
    listed = extract_sequences(docs, ex)   # Python-side batches
    assert runs.user_ids == listed.user_ids
    assert np.array_equal(runs.seq_user, listed.seq_user)
    assert np.array_equal(runs.seq_ptr, listed.seq_ptr)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]))),
       st.lists(st.integers(-2 ** 63, 2 ** 63 - 1)))
def test_ids_encoded_in_polars_are_encode_user_ids(strings, numbers):
    """The user order's and the item hashes' input bytes, built from a polars column, are
    ``encode_user_ids`` of its values: any text (polars holds no lone surrogates), any int64."""
    from dp_vocab.bounding.user_order import encode_user_ids as encoded_ids
    for values, dtype in ((strings, pl.String), (numbers, pl.Int64)):
        buf, offsets = encoded_ids(pl.Series(values, dtype=dtype))
        want_buf, want_offsets = encode_user_ids(values)
        assert np.array_equal(buf, want_buf) and np.array_equal(offsets, want_offsets)
    assert np.array_equal(item_hashes(strings, encoded_ids(pl.Series(strings, dtype=pl.String))),
                          item_hashes(strings))


def test_user_rows_of_columns_and_lists_are_numbered_by_first_document():
    from dp_vocab.data.builder import UserRows as _Users
    batches = [pl.Series(["b", "a", "b"]), pl.Series(["c", "a"]), ["d", "b", "d"],
               pl.Series(["e", "c"])]
    first: dict = {}
    for kinds in (batches[:2] + batches[3:], batches):   # all columns; columns and a list
        users, provisional = _Users(), []
        for batch in kinds:
            provisional.append(users.rows(batch))
        ids, final = users.finish()
        # every batch a column: the ids stay a column (ItemSets lists them only if read)
        assert (kinds is batches) == isinstance(ids, list)
        ids = ids if isinstance(ids, list) else ids.to_list()
        first = dict.fromkeys(u for b in kinds for u in b)
        assert ids == list(first)
        got = [ids[r] for rows in provisional
               for r in (rows if final is None else final[rows]).tolist()]
        assert got == [u for b in kinds for u in b]
    users = _Users()
    users.rows(pl.Series([7, 8]))
    users.rows(pl.Series(["7"]))   # an integer and a string id are two users
    assert users.finish() == ([7, 8, "7"], None)


@pytest.mark.parametrize("kwargs", [{"n_max": 3, "joiner": "_"}, {"max_length": 5},
                                    {"joiner": "'"}])   # n_max = 1: runs still drop joiners
def test_token_sequences_equal_the_python_extractor(kwargs, sample_docs):
    ex = ItemExtractor(RegexTokenizer(), **kwargs)
    fast = extract_sequences(sample_docs, ex)
    users, runs = {}, []
    for user, text in sample_docs:
        u = users.setdefault(user, len(users))
        runs.extend((u, run) for run in ex.runs(text))
    assert fast.user_ids == list(users)
    strings = fast.vocab.strings
    got = [(int(fast.seq_user[s]), [strings[t] for t in fast.tokens[a:b]])
           for s, (a, b) in enumerate(zip(fast.seq_ptr[:-1], fast.seq_ptr[1:]))]
    assert got == runs


def test_line_breaks_inside_tokens_and_patterns_without_translation():
    docs = [("a", "x\x1cy z\u2028w  q\x85r"), ("b", "foo\nbar baz")]
    for pattern in (r"[^ ]+", r"\S+", r"\b\w+\b", r"(?i)[a-z]+", r"\w+(?=\s)"):
        ex = ItemExtractor(RegexTokenizer(pattern))
        expected = ItemSets.from_user_items((u, ex(t)) for u, t in docs).to_dict()
        assert extract_itemsets(docs, ex).to_dict() == expected, pattern
    # which patterns run columnar: the ones with a faithful translation
    assert rust_pattern(r"[^ ]+") is not None and rust_pattern(DEFAULT_PATTERN) is not None
    for untranslatable in (r"\b\w+\b", r"(?i)[a-z]+", r"\w+(?=\s)", r"\w+$", r"\w*",
                           r"[[:alpha:]]+", r"[a&&b]"):
        assert rust_pattern(untranslatable) is None, untranslatable


def test_python_and_rust_classes_differ_only_on_characters_python_does_not_know():
    """The documented difference: Rust's own \\w and \\s differ from Python's on thousands of
    assigned characters (marks, connector punctuation, No digits, U+001C..U+001F); translated,
    the classes and the NFKC + lower-case normalisation agree on every code point Python's
    Unicode database (14.0 for Python 3.11) assigns, and may differ only on newer ones."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    s = pl.Series(chars)
    py_word = np.array([bool(re.fullmatch(r"\w", c)) for c in chars])
    py_space = np.array([c.isspace() for c in chars])
    unassigned = np.array([unicodedata.category(c) == "Cn" for c in chars])

    rust_word_raw = s.str.contains(r"^\w$").to_numpy()
    rust_space_raw = s.str.contains(r"^\s$").to_numpy()
    raw_diff = {chars[i] for i in np.flatnonzero((rust_word_raw != py_word) & ~unassigned)}
    assert {"\u0301", "\u203f", "\u00b2"} <= raw_diff     # mark, Pc, No: untranslated differ
    assert {chr(c) for c in range(0x1C, 0x20)} == \
        {chars[i] for i in np.flatnonzero(rust_space_raw != py_space)}

    word = s.str.contains(f"^[{WORD}]$").to_numpy()
    space = s.str.contains(f"^[{SPACE}]$").to_numpy()
    assert not ((word != py_word) & ~unassigned).any()
    assert not ((space != py_space) & ~unassigned).any()

    py_norm = [unicodedata.normalize("NFKC", c).lower() for c in chars]
    rust_norm = s.str.normalize("NFKC").str.to_lowercase().to_list()
    norm_diff = [i for i, (a, b) in enumerate(zip(py_norm, rust_norm)) if a != b]
    assert all(unassigned[i] or unicodedata.normalize("NFKC", chars[i]) != chars[i]
               and unicodedata.category(unicodedata.normalize("NFKC", chars[i])[0]) == "Cn"
               for i in norm_diff)


# -- JSONL as columns ------------------------------------------------------------------------
HOSTILE_LINES = [
    b'{"user": "a", "text": "ok fine"}',
    b'{"user": 7, "text": "an integer id"}',                       # mixed kinds in one chunk
    b'{"user": "7", "text": "a string id"}',
    b'{"user": "d", "text": "first", "user": "e"}',                  # duplicate key: an error
    b'{"user": "s", "text": "lone \\ud800 surrogate"}',
    b'{"user": "t", "text": "raw\ttab"}',                             # json rejects
    b'{"\\u0075ser": "x", "text": "escaped key"}',
    b'{"user": "u", "text": "x", "o": NaN}',
    b'',
    b'   ',
    b'{"user": "v", "text": 5}',
    b'{"user": "", "text": "empty id"}',
    b'{"user": "w", "text": " \\u001c "}',
    b'{"user": 1.5, "text": "float id"}',
    b'{"user": "x", "text": "ok", "meta": {"user": "y"}}',
    b'{"user": "z", "text": "caf\xe9"}',
    b'{"user": "q", "text": "' + b"y" * 300 + b'"}',                 # over max_line_bytes
    b'{"user": "r", "text": "last \\u00e9 line"}',
]


def _frames_docs(reader):
    out = []
    for users, texts in reader.frames():
        users = users.to_list() if isinstance(users, pl.Series) else users
        out.extend(zip(users, texts.to_list()))
    return out


@pytest.mark.parametrize("chunk", [64, 200, 1 << 20])
def test_jsonl_columns_equal_line_by_line_in_skip_mode(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(columns, "CHUNK_BYTES", chunk)
    p = tmp_path / "c.jsonl"
    clean = [json.dumps({"user": f"u{i % 5}", "text": f"doc {i}"}).encode() for i in range(40)]
    p.write_bytes(b"\n".join(clean[:20] + HOSTILE_LINES + clean[20:]))   # no final newline
    slow = JsonlReader(p, on_error="skip", max_line_bytes=200)
    fast = JsonlReader(p, on_error="skip", max_line_bytes=200)
    with pytest.warns(MixedUserIdWarning):   # columns hold UTF-8: a lone surrogate is U+FFFD
        expected = [(u, _LONE_SURROGATE.sub("\ufffd", t)) for u, t in slow]
    with pytest.warns(MixedUserIdWarning):
        got = _frames_docs(fast)
    assert got == expected
    assert fast.skipped == slow.skipped and fast.skip_reasons == slow.skip_reasons


@pytest.mark.parametrize("line", range(len(HOSTILE_LINES)))
def test_jsonl_columns_raise_the_same_error(tmp_path, monkeypatch, line):
    monkeypatch.setattr(columns, "CHUNK_BYTES", 128)
    p = tmp_path / "c.jsonl"
    clean = [json.dumps({"user": f"u{i}", "text": f"doc {i}"}).encode() for i in range(12)]
    p.write_bytes(b"\n".join(clean + [HOSTILE_LINES[line]] + clean) + b"\n")

    def outcome(run):
        try:
            docs = run(JsonlReader(p, max_line_bytes=200))
            return ("ok", [(u, _LONE_SURROGATE.sub("\ufffd", t)) for u, t in docs])
        except CorpusError as e:
            return ("error", str(e))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixedUserIdWarning)
        assert outcome(_frames_docs) == outcome(list)


def test_clean_chunks_take_the_polars_path(tmp_path, monkeypatch):
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"user": i, "text": f"doc é {i}"}, ensure_ascii=False) + "\n"
                         for i in range(100)), encoding="utf-8")
    monkeypatch.setattr(columns, "_slow", None)   # any fallback would fail loudly
    users, texts = next(iter(JsonlReader(p).frames()))
    assert users.dtype == pl.Int64 and users.to_list() == list(range(100))
    assert texts[3] == "doc é 3"


def test_values_that_read_like_a_field_name_stay_on_the_polars_path(tmp_path, monkeypatch):
    # real corpora hold texts such as "text" or "user": not keys (no colon follows them)
    p = tmp_path / "c.jsonl"
    docs = [("a", "text"), ("b", "user"), ("c", 'say "text": no'), ("d", "text user")]
    p.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in docs),
                 encoding="utf-8")
    monkeypatch.setattr(columns, "_slow", None)   # any fallback would fail loudly
    assert _frames_docs(JsonlReader(p)) == docs


@pytest.mark.parametrize("line", [
    b'{"user": "a", "text": "x", "meta": {"text": "y"}}',     # nested key of the field's name
    b'{"user": "a", "text": "x", "text" : "y"}',              # duplicate, space before colon
    b'{"user": "a", "text": "x", "b\\"text": "y"}',           # a key ending in the name
])
def test_keys_of_the_field_name_anywhere_leave_the_polars_path(tmp_path, monkeypatch, line):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"user": "b", "text": "clean"}\n' + line + b"\n")
    slow_chunks = []
    real_slow = columns._slow
    monkeypatch.setattr(columns, "_slow", lambda *a: slow_chunks.append(1) or real_slow(*a))

    def outcome(read):   # the documents, or the error (a duplicate field is one)
        try:
            return read(JsonlReader(p))
        except CorpusError as e:
            return str(e)
    assert outcome(_frames_docs) == outcome(list)
    assert slow_chunks == [1]


def test_a_field_name_json_can_escape_is_read_line_by_line(tmp_path):
    # "a\/b" is the key "a/b": a duplicate polars and json resolve differently (first / last),
    # so both paths refuse it, naming the field
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"a/b": "first", "text": "t", "a\\/b": "last"}\n')
    for read in (_frames_docs, list):
        with pytest.raises(CorpusError, match=r"c\.jsonl:1: field 'a/b': given twice"):
            read(JsonlReader(p, user_field="a/b"))


@pytest.mark.parametrize("grouped", [True, False])
def test_item_sets_over_many_chunks_with_both_kinds_of_user_id(tmp_path, monkeypatch, grouped):
    # chunks of integer ids, of string ids with the same digits ("7" and 7 are two users),
    # and one chunk the line-by-line reader takes; grouped: each user's documents in one
    # chunk, so the parts come out in order and are merged without a sort
    monkeypatch.setattr(columns, "CHUNK_BYTES", 300)
    lines = [{"user": i // 3, "text": f"w{i % 5} common x{i}"} for i in range(30)]
    lines += [{"user": str(i // 3), "text": f"w{i % 4} common"} for i in range(30)]
    lines += [{"user": "s", "text": "tab\tinside", "extra": 1}]   # a raw tab: line by line
    if not grouped:
        lines = lines[::2] + lines[1::2]
    p = tmp_path / "c.jsonl"
    p.write_bytes(b"".join(json.dumps(d).encode() + b"\n" for d in lines))
    ex = ItemExtractor(RegexTokenizer())
    with pytest.warns(MixedUserIdWarning):
        fast = extract_itemsets(JsonlReader(p), ex)
    with pytest.warns(MixedUserIdWarning):
        slow = python_itemsets(JsonlReader(p), ex)
    assert fast.user_ids == slow.user_ids and 7 in fast.user_ids and "7" in fast.user_ids
    assert fast.to_dict() == slow.to_dict()
    assert fast.vocab.strings == slow.vocab.strings and np.array_equal(fast.items, slow.items)


def test_interner_gives_one_id_per_string_across_columns_and_lists():
    """Column batches keep their codes from one batch to the next (the interner's own polars
    categories); ids are dense in order of first occurrence, whichever path saw a string
    first, and a second interner numbers its strings afresh."""
    import polars as pl
    from dp_vocab.data.builder import Interner as _Interner
    a, b = _Interner(hashes=True), _Interner()
    assert a.column_ids(pl.Series(["x", "y", "x", "z"])).tolist() == [0, 1, 0, 2]
    assert b.column_ids(pl.Series(["z", "q"])).tolist() == [0, 1]
    assert a.ids(["w", "y"]).tolist() == [3, 1]
    assert a.column_ids(pl.Series(["w", "v", "z", "x"])).tolist() == [3, 4, 2, 0]
    assert a.column_ids(pl.Series([], dtype=pl.String)).tolist() == []
    assert a.vocabulary().strings == ["x", "y", "z", "w", "v"]
    assert np.array_equal(a.vocabulary().hashes(), item_hashes(["x", "y", "z", "w", "v"]))


def test_a_batch_split_over_cores_keeps_every_documents_tokens_in_order():
    """The tokens of a batch come from polars' streaming engine, which splits the batch into
    pieces on every core: the (doc, tok) rows must still be the Python extractor's, document
    by document and in text order (n-gram runs depend on it), on a batch of ~1M tokens
    (many pieces)."""
    rng = np.random.default_rng(7)
    words = np.array(["Alpha", "beta", "Γάμμα", "ｄｅｌｔａ", "e's", "!", "42", "x_y"])
    texts = [" ".join(words[rng.integers(0, words.size, rng.integers(0, 40))])
             for _ in range(50_000)]
    ex = ItemExtractor(RegexTokenizer())
    rows = columnar_extractor(ex).tokens(pl.Series(texts))
    assert rows.height > 900_000
    want_doc = np.repeat(np.arange(len(texts)), [len(ex(t)) for t in texts])
    assert np.array_equal(rows["doc"].to_numpy(), want_doc)
    assert rows["tok"].to_list() == [w for t in texts for w in ex(t)]


def test_an_error_before_the_first_batch_stops_the_reader_threads(tmp_path, monkeypatch):
    """The reader threads start with the extraction (the kernels load meanwhile); an error
    before the first batch is taken (here: in that loading) stops them and closes the file."""
    import threading
    import dp_vocab.data.vocabulary as vocabulary_module
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"user": f"u{i}", "text": "a b c"}) + "\n"
                         for i in range(1000)))

    def fail(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(vocabulary_module, "item_hashes", fail)
    with pytest.raises(KeyboardInterrupt) as raised:   # its traceback kept, as a REPL keeps it
        extract_itemsets(JsonlReader(p), ItemExtractor(RegexTokenizer()))
    assert raised.traceback   # the frames (and what they hold) are still alive here
    assert not [t for t in threading.enumerate() if t.name == "dp-vocab-reader"]
