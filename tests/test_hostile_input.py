"""Hostile input: clear errors or counted skips, bounded memory, no half-written output."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dp_vocab.corpora import JsonlReader
from dp_vocab.errors import CorpusError
from dp_vocab.itemsets import ItemSetsBuilder
from dp_vocab.text.items import ItemExtractor
from dp_vocab.text.tokenizers import RegexTokenizer
from dp_vocab.corpora.bundled import PRESETS as RECIPE_DIR

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
        b = ItemSetsBuilder(compact_every=20_000, max_distinct_per_user=1000)
        for d in order:
            b.add("bot", d.split())
            b.add("human", ["hello", "world"])
        s = b.build()
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

    from dp_vocab.itemsets import item_hashes
    small_chunks = type("SmallChunks", (ItemSetsBuilder,), {"_CHUNK": chunk})
    expected: dict = {}
    for user, items in docs:
        expected.setdefault(user, Counter()).update(items)
    for user, counts in expected.items():
        keep = sorted(counts, key=lambda w: int(item_hashes([w])[0]))[:cap]
        expected[user] = {w: counts[w] for w in keep}
    b = small_chunks(compact_every=compact, max_distinct_per_user=cap)
    for k, (user, items) in enumerate(docs):
        if k % 2:
            b.add(user, iter(items))              # a lazy stream, consumed in chunks
        else:
            b.add_counts(user, Counter(items))
    assert b.build().to_dict() == expected
