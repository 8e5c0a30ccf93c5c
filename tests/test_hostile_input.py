"""Hostile input: clear errors or counted skips, bounded memory, no half-written output."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dp_vocab.ingest.corpora import JsonlReader
from dp_vocab.errors import CorpusError
from dp_vocab.data.builder import ItemRowsBuilder
from dp_vocab.data.itemsets import ItemSets
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import RegexTokenizer
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR

REPO = Path(__file__).resolve().parents[1]

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(), c,
                                                                                 max_size=3),
                           max_leaves=8)
lines = st.lists(st.one_of(
    st.binary(max_size=60),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"user": json_values, "text": json_values}).map(
        lambda d: json.dumps(d).encode())), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=lines)
def test_fuzzed_jsonl_gives_corpus_errors_or_counted_skips(tmp_path, lines):
    p = tmp_path / "fuzz.jsonl"
    p.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    try:
        docs = list(JsonlReader(p))
    except CorpusError as e:
        assert "fuzz.jsonl:" in str(e)
    else:
        assert all(isinstance(u, (str, int)) and isinstance(t, str) for u, t in docs)
    r = JsonlReader(p, on_error="skip")
    docs = list(r)  # never raises in skip mode
    assert all(isinstance(u, (str, int)) and not isinstance(u, bool) and t.strip()
               for u, t in docs)
    ex = ItemExtractor(RegexTokenizer())
    for _, t in docs:
        ex(t)


def test_deep_nesting_nul_bytes_and_numbers(tmp_path):
    p = tmp_path / "c.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    p.write_text(deep + "\n" + json.dumps({"user": 5, "text": "nul\u0000inside"}) + "\n"
                 + json.dumps({"user": 1.5, "text": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="c.jsonl:1: JSON nested too deeply"):
        list(JsonlReader(p))
    r = JsonlReader(p, on_error="skip")
    assert list(r) == [(5, "nul\u0000inside")] and r.skipped == 2


def test_over_long_line_is_never_held_whole(tmp_path):
    p = tmp_path / "c.jsonl"
    with open(p, "wb") as f:
        f.write(json.dumps({"user": "a", "text": "ok"}).encode() + b"\n")
        f.write(b'{"user": "b", "text": "' + b"x" * 3_000_000 + b'"}\n')
        f.write(json.dumps({"user": "c", "text": "fine"}).encode() + b"\n")
    with pytest.raises(CorpusError, match=r"c.jsonl:2: line longer than max_line_bytes"):
        list(JsonlReader(p, max_line_bytes=65536))
    r = JsonlReader(p, max_line_bytes=65536, on_error="skip")
    assert list(r) == [("a", "ok"), ("c", "fine")] and r.skipped == 1


def test_one_user_with_endless_distinct_tokens_is_capped(tmp_path):
    docs = [" ".join(f"tok{i}_{j}" for j in range(500)) for i in range(400)]  # 200k distinct
    sets = []
    for order in (docs, docs[::-1]):
        b = ItemRowsBuilder(compact_every=20_000, cap=1000)
        for d in order:
            b.add("bot", d.split())
            b.add("human", ["hello", "world"])
        s = ItemSets.from_rows(b.build())
        sets.append(s.to_dict())
        assert len(s.row(0)[0]) == 1000 and s.n_pairs == 1002
    # the kept items depend only on the user's own items, not on their order
    assert sets[0] == sets[1]


def test_unicode_confusables_fold_where_nfkc_says_so():
    ex = ItemExtractor(RegexTokenizer())
    assert ex("ﬁle ＦＩＬＥ file") == ["file", "file", "file"]  # ligature, fullwidth
    cyrillic = ex("fіle")  # Cyrillic і: a different string, kept apart (not NFKC-equivalent)
    assert cyrillic == ["fіle"] and cyrillic != ["file"]


def test_sigterm_leaves_no_partial_output(tmp_path):
    corpus = tmp_path / "big.jsonl"
    # about 12 s of work on a quiet machine: the signal at 3 s must land mid-run
    with open(corpus, "w", encoding="utf-8") as f:
        f.writelines(f'{{"user": "u{i % 5000}", "text": "word{i % 977} other{i % 331} and more '
                     f'text {i}"}}\n' for i in range(1_200_000))
    out = tmp_path / "out"
    exe = Path(sys.executable).parent / "dp-vocab"
    proc = subprocess.Popen([str(exe), "run", str(RECIPE_DIR / "quickstart.cfg"), "-o",
                             str(out), "-q", "--paths.corpus", str(corpus)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3.0)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and b"nothing was written" in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["big.jsonl"]


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                               st.lists(st.text("xyz", min_size=1, max_size=3), max_size=40)),
                     max_size=30),
       cap=st.integers(1, 12), compact=st.integers(1, 50), chunk=st.integers(1, 20))
def test_streaming_cap_keeps_exactly_the_smallest_hash_items_with_full_counts(docs, cap, compact,
                                                                             chunk):
    """The bounded per-user structure gives the rule's result: a user over the cap keeps its
    ``cap`` distinct items of smallest item hash, each with all its occurrences."""
    from collections import Counter

    from dp_vocab.data.itemsets import item_hashes
    small_chunks = type("SmallChunks", (ItemRowsBuilder,), {"_CHUNK": chunk})
    expected: dict = {}
    for user, items in docs:
        expected.setdefault(user, Counter()).update(items)
    for user, counts in expected.items():
        keep = sorted(counts, key=lambda w: int(item_hashes([w])[0]))[:cap]
        expected[user] = {w: counts[w] for w in keep}
    b = small_chunks(compact_every=compact, cap=cap)
    for k, (user, items) in enumerate(docs):
        if k % 2:
            b.add(user, iter(items))              # a lazy stream, consumed in chunks
        else:
            b.add_counts(user, Counter(items))
    assert ItemSets.from_rows(b.build()).to_dict() == expected


# ---- DataFrames and datasets objects: a clear error (frame, row, field, expected, found; never
# the value) or the item sets the same data gives as plain (user, text) pairs

SECRET = "Alice Secret"
TEXTS = ["the cat", "a dog", "the dog", "a cat", "my cat", "your dog"]


def _pandas(**cols):
    import pandas as pd
    return pd.DataFrame(cols)


def _polars(**cols):
    pl = pytest.importorskip("polars")
    return pl.DataFrame(cols)


def _dataset(**cols):
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_dict(cols)


def _frame_cases():
    import pandas as pd
    pl = pytest.importorskip("polars")
    nan_text = TEXTS[:2] + [float("nan")] + TEXTS[3:]
    none_text = TEXTS[:2] + [None] + TEXTS[3:]
    return [
        # (id, frame factory, kwargs, expected error regex or each row's user id, as given)
        ("pandas-mixed-str-int-ids", lambda: _pandas(user=[SECRET, 1, "b", 2, "c", 3],
                                                     text=TEXTS), {},
         r"<DataFrame>: field 'user': expected one kind of value per column .*found a column "
         r"of mixed types; convert it"),
        ("pandas-int-ids-with-nan", lambda: _pandas(user=[1, 2, None, 4, 5, 6], text=TEXTS), {},
         r"field 'user': .*found a column of type double; integer ids with a missing value "
         r"become floats in pandas: convert with"),
        ("pandas-nullable-int-ids-with-na", lambda: _pandas(
            user=pd.array([1, 2, pd.NA, 4, 5, 6], dtype="Int64"), text=TEXTS), {},
         r"<DataFrame>, row 3 \(by position, from 1\): field 'user': expected a non-empty "
         r"string or integer user id, found null"),
        ("pandas-nan-text", lambda: _pandas(user=list("abcdef"), text=nan_text), {},
         r"<DataFrame>, row 3 \(by position, from 1\): field 'text': expected a string, "
         r"found null"),
        ("pandas-mixed-text", lambda: _pandas(user=list("abcdef"),
                                              text=TEXTS[:2] + [3] + TEXTS[3:]), {},
         r"field 'text': expected one kind of value per column"),
        ("pandas-bytes-text", lambda: _pandas(user=list("abcdef"),
                                              text=[t.encode() for t in TEXTS]), {},
         r"field 'text': expected a column of strings, found a column of type binary"),
        ("pandas-duplicate-text-column", lambda: pd.DataFrame(
            [["a", "x y", SECRET]] * 6, columns=["user", "text", "text"]), {},
         r"<DataFrame>: field 'text': expected one column of this name, found 2"),
        ("pandas-datetime-ids", lambda: _pandas(user=pd.date_range("2020", periods=6),
                                                text=TEXTS), {},
         r"field 'user': expected a column of strings or integers \(user ids\), found a column "
         r"of type timestamp"),
        ("pandas-categorical-string-ids", lambda: _pandas(
            user=pd.Categorical(list("abacca")), text=TEXTS), {},
         list("abacca")),
        ("pandas-categorical-integer-ids", lambda: _pandas(
            user=pd.Categorical([1, 2, 1, 3, 3, 1]), text=TEXTS), {},
         [1, 2, 1, 3, 3, 1]),
        ("pandas-integer-column-names", lambda: pd.DataFrame({0: list("aabbcc"), 1: TEXTS}),
         {"user": "0", "text": "1"}, list("aabbcc")),
        ("polars-categorical-ids", lambda: _polars(
            user=pl.Series(list("aabbcc"), dtype=pl.Categorical), text=TEXTS), {},
         list("aabbcc")),
        ("polars-float-text-with-nan", lambda: _polars(user=list("abcdef"),
                                                       text=[1.0, float("nan"), 2, 3, 4, 5]), {},
         r"field 'text': expected a column of strings, found a column of type double"),
        ("polars-null-text", lambda: _polars(user=list("abcdef"), text=none_text), {},
         r"<DataFrame>, row 3 \(by position, from 1\): field 'text': expected a string, "
         r"found null"),
        ("polars-struct-ids", lambda: _polars(user=[{"name": SECRET}] * 6, text=TEXTS), {},
         r"field 'user': expected a column of strings or integers \(user ids\), found a column "
         r"of type struct"),
        ("datasets-none-text", lambda: _dataset(user=list("abcdef"), text=none_text), {},
         r"<Dataset>, row 3 \(by position, from 1\): field 'text': expected a string, "
         r"found null"),
        ("datasets-list-text", lambda: _dataset(user=list("abcdef"),
                                                text=[[SECRET]] * 6), {},
         r"<Dataset>: field 'text': expected a column of strings, found a column of type list"),
        ("datasets-float-ids", lambda: _dataset(user=[1.5] * 6, text=TEXTS), {},
         r"<Dataset>: field 'user': .*found a column of type double"),
        # as a run: a table that gives no document is an error, not a release of no users
        ("datasets-empty", lambda: _dataset(user=[], text=[]), {},
         r"^<Dataset>: no document was read: found no row holding a document\. Pass a table "
         r"that holds documents$"),
        ("pandas-empty", lambda: pd.DataFrame({"user": [], "text": []}), {},
         r"^<DataFrame>: no document was read: found no row holding a document"),
        ("polars-blank-texts-only", lambda: _polars(user=list("abcdef"), text=[" ", "\n"] * 3),
         {}, r"^<DataFrame>: no document was read: all 6 rows were skipped \(the first: "
             r"<DataFrame>, row 1 \(by position, from 1\): field 'text': empty document, "
             r"skipped\)\. Check that text= names "
             r"the column holding the texts$"),
    ]


@pytest.mark.parametrize("case", range(21))
def test_hostile_frames_give_a_clear_error_or_the_right_item_sets(case):
    from dp_vocab import itemsets_from_frame
    name, make, kwargs, expected = _frame_cases()[case]
    frame = make()
    if isinstance(expected, str):
        with pytest.raises(CorpusError) as e:
            itemsets_from_frame(frame, **kwargs)
        assert re.search(expected, str(e.value)), (name, str(e.value))
        assert SECRET not in str(e.value)
    else:   # the same rows as plain (user, text) pairs
        extract = ItemExtractor(RegexTokenizer())
        want: dict = {}
        for user, text in zip(expected, TEXTS):
            want.setdefault(user, set()).update(extract(text))
        got = itemsets_from_frame(frame, **kwargs).to_dict()
        assert {u: set(items) for u, items in got.items()} == want, name
        assert [type(u) for u in got] == [type(u) for u in want], name


def test_the_frame_cases_are_all_run():
    assert len(_frame_cases()) == 21


def test_an_error_after_sigterm_reads_as_the_interruption(monkeypatch, capsys):
    """Python ignores an exception raised inside a C callback (numba's compiler calls back into
    Python): a SIGTERM landing there leaves the run to fail later with another error, which
    must still read as the interruption, not as an internal error."""
    import typer
    from dp_vocab import cli
    monkeypatch.setitem(cli._STATE, "terminated", True)
    with pytest.raises(typer.Exit) as e, cli._errors():
        raise RuntimeError("numba's cache was left half-written")
    assert e.value.exit_code == 130
    assert "interrupted; nothing was written" in capsys.readouterr().err
    monkeypatch.setitem(cli._STATE, "terminated", False)
    with pytest.raises(typer.Exit) as e, cli._errors():
        raise RuntimeError("x")
    assert e.value.exit_code == 1
