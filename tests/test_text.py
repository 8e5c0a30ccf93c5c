"""Tokenizers, normalisation and n-gram extraction."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dp_vocab.errors import ParameterError
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import (HFPreTokenizer, RegexTokenizer, SpacyTokenizer,
                                             byte_level, metaspace_parts, unspaced_parts,
                                             wide_characters)


def test_regex_default_words_and_punctuation():
    tok = RegexTokenizer()
    assert tok("Stanford isn’t real, right? café_1 — 90$") == \
        ["Stanford", "isn’t", "real", ",", "right", "?", "café_1", "—", "90", "$"]
    with pytest.raises(ParameterError, match="pattern"):
        RegexTokenizer("(unclosed")


def test_spacy_and_hf_pre_tokenizers():
    assert SpacyTokenizer("en")("Don't stop.\n\nNow") == ["Do", "n't", "stop", ".", "Now"]
    assert HFPreTokenizer("whitespace")("Hello, world!") == ["Hello", ",", "world", "!"]
    assert HFPreTokenizer("bert")("Hello, world!") == ["Hello", ",", "world", "!"]
    assert HFPreTokenizer("byte_level")("Hello world") == ["Hello", "Ġworld"]
    with pytest.raises(ParameterError, match="kind"):
        HFPreTokenizer("sentencepiece")
    with pytest.raises(ParameterError, match="lang"):
        SpacyTokenizer("not-a-language")


def test_metaspace_marks_units_as_sentencepiece():
    assert HFPreTokenizer("metaspace")("I'm at\n the end.") == ["▁I'm", "▁at", "▁the", "▁end."]
    with pytest.raises(ParameterError, match="kind"):
        HFPreTokenizer("metaspace_split")   # removed: see metaspace_parts


def test_metaspace_parts_are_the_units_then_the_runs_of_letters_and_digits_inside_them():
    """Each unit, then the parts of every unit with marks between its letters or digits: a run
    of letters and digits with the marks before it (the first with the unit's ▁), and the marks
    that end the unit; a unit of one part (▁(it, ▁See) adds nothing."""
    text = "See https://www.x.org/a_b?v=2. (it need-based"
    units = ["▁See", "▁https://www.x.org/a_b?v=2.", "▁(it", "▁need-based"]
    assert HFPreTokenizer("metaspace")(text) == units
    assert HFPreTokenizer("metaspace_parts")(text) == units + [
        "▁https", "://www", ".x", ".org", "/a", "_b", "?v", "=2", ".", "▁need", "-based"]
    assert HFPreTokenizer("metaspace_parts")("I'm at\n the end.") == [
        "▁I'm", "▁at", "▁the", "▁end.", "▁I", "'m", "▁end", "."]
    assert HFPreTokenizer("metaspace_parts").describe() == {
        "tokenizer": "hf_pre_tokenizer", "kind": "metaspace_parts"}


def _parts_by_hand(unit: str) -> list[str]:
    """metaspace_parts written another way: runs of letters, digits and combining marks vs
    runs of anything else; each run of the first kind takes the run before it."""
    import itertools
    import unicodedata
    mark = "▁" if unit.startswith("▁") else ""
    runs = [(word, "".join(chars)) for word, chars in itertools.groupby(
        unit[len(mark):], lambda ch: ch.isalnum() or unicodedata.category(ch)[0] == "M")]
    parts, before = [], ""
    for word, run in runs:
        if word:
            parts.append(before + run)
            before = ""
        else:
            before = run
    parts += [before] if before else []
    return [mark + parts[0], *parts[1:]] if len(parts) > 1 else []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1_-./(▁ \n\u2028é\u0301\u093f😀"), max_size=40))
def test_metaspace_parts_of_any_text_spell_their_unit(text):
    """Hostile text (line breaks, a literal ▁, underscores, combining marks, emoji): the items
    are the units, then each unit's parts, which are those of a plain run-by-run reading and
    spell their unit, then the characters outside ASCII that are not items already."""
    units = HFPreTokenizer("metaspace")(text)
    items = HFPreTokenizer("metaspace_parts")(text)
    parts = [metaspace_parts(u) for u in units]
    made = units + [p for ps in parts for p in ps]
    wide = [ch for ch in dict.fromkeys(text) if ch in "▁é\u0301\u093f😀" and ch not in made]
    assert items == made + wide
    for unit, ps in zip(units, parts):
        assert ps == _parts_by_hand(unit)
        assert not ps or "".join(ps) == unit


def test_combining_marks_stay_with_their_letters():
    assert metaspace_parts("▁हिन्दी") == [] and metaspace_parts("▁nai\u0308ve") == []
    assert metaspace_parts("▁हिन्दी-भाषा") == ["▁हिन्दी", "-भाषा"]


@pytest.mark.parametrize("kind", ["metaspace_parts", "byte_level_parts", "bert_parts"])
def test_parts_refuse_n_grams(kind):
    """Parts follow the units they come from: consecutive items are not consecutive words."""
    with pytest.raises(ParameterError, match=f"n_max: expected 1 with kind = \"{kind}\""):
        ItemExtractor(HFPreTokenizer(kind), n_max=2)


def test_text_without_spaces_gives_its_characters_and_pairs_of_characters():
    """A Chinese or Japanese clause is one unit: its runs of two or more ideographs or kana
    also give each character and each adjacent pair (byte-level parts; Metaspace's parts are
    those between marks, then each character alone); a lone one and other scripts give
    nothing."""
    assert unspaced_parts("用于Python的工具库。カタカナ") == [
        "用", "于", "用于", "的", "工", "具", "库", "的工", "工具", "具库",
        "カ", "タ", "カ", "ナ", "カタ", "タカ", "カナ"]
    assert unspaced_parts("a的b 한국어 русский café") == []
    assert unspaced_parts("plain ASCII") == []
    text = "Python的工具库, 一个 test"
    assert HFPreTokenizer("byte_level_parts")(text) == HFPreTokenizer("byte_level")(text) + [
        byte_level(p) for p in ["的", "工", "具", "库", "的工", "工具", "具库", "一", "个", "一个"]]
    assert HFPreTokenizer("metaspace_parts")(text) == [
        "▁Python的工具库,", "▁一个", "▁test", "▁Python的工具库", ",", *"的工具库一个"]


def test_each_character_outside_ascii_is_an_item_of_its_own():
    """The parts kinds also hold each distinct character outside ASCII (white space aside)
    that is not an item already, once, in the order it first appears: the letters of a
    Russian word, an accented letter, a dash, an emoji."""
    text = "Пакет для café — 🚀\u00a0x"
    assert wide_characters(text) == [*"Пакетдляé", "—", "🚀"]
    assert wide_characters("plain ASCII") == []
    assert HFPreTokenizer("byte_level_parts")(text) == HFPreTokenizer("byte_level")(text) + [
        byte_level(ch) for ch in [*"Пакетдляé", "—", "🚀"]]
    assert HFPreTokenizer("metaspace_parts")(text) == HFPreTokenizer("metaspace")(text) + [
        *"Пакетдляé", "—", "🚀"]
    # BERT makes an ideograph, a dash and an accented word units already
    assert HFPreTokenizer("bert_parts")("пакет, é — 的") == [
        "пакет", ",", "é", "—", "的", *"пакет"]
    assert HFPreTokenizer("bert_parts").describe() == {
        "tokenizer": "hf_pre_tokenizer", "kind": "bert_parts"}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("a 的工具ア\n\u3000，é😀\x00\x7f\u0100"), max_size=30))
def test_byte_level_parts_are_gpt2_units_of_the_runs(text):
    """``byte_level`` is GPT-2's byte-to-character map (as ``tokenizers`` writes it), and
    the parts are the runs' characters and pairs, read here run by run, then the other
    characters outside ASCII (``\u3000`` is white space)."""
    import itertools
    from tokenizers import pre_tokenizers
    whole = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    assert byte_level(text) == "".join(u for u, _ in whole.pre_tokenize_str(text))
    by_hand = []
    for unspaced, run in itertools.groupby(text, lambda ch: ch in "的工具ア"):
        run = "".join(run)
        if unspaced and len(run) > 1:
            by_hand += [*run, *(run[i:i + 2] for i in range(len(run) - 1))]
    assert unspaced_parts(text) == by_hand
    wide = [ch for ch in dict.fromkeys(text) if ch in "的工具ア，é😀\u0100" and ch not in by_hand]
    assert HFPreTokenizer("byte_level_parts")(text) == \
        HFPreTokenizer("byte_level")(text) + [byte_level(p) for p in by_hand + wide]


def test_normalisation():
    ex = ItemExtractor(RegexTokenizer(), lowercase=True, nfkc=True)
    assert ex("ＦＵＬＬ ﬁne Ⅻ") == ["full", "fine", "xii"]
    assert ItemExtractor(RegexTokenizer(), lowercase=False, nfkc=False)("ﬁne") == ["ﬁne"]


def test_ngrams_do_not_cross_documents_or_long_tokens():
    ex = ItemExtractor(RegexTokenizer(), n_min=1, n_max=3, max_length=5)
    assert ex("a b c") == ["a", "b", "c", "a b", "b c", "a b c"]
    # "toolongword" breaks the stream: no n-gram spans it
    assert ex("x toolongword y z") == ["x", "y", "z", "y z"]
    only_bigrams = ItemExtractor(RegexTokenizer(), n_min=2, n_max=2)
    assert only_bigrams("one") == []
    with pytest.raises(ParameterError, match="n_max"):
        ItemExtractor(RegexTokenizer(), n_min=3, n_max=2)


def test_spacy_tokenizer_cuts_only_pathological_runs():
    """A 40,000-emoji run (spaCy's affix search is quadratic in it: minutes) is cut into pieces
    of MAX_RUN before spaCy sees it; ordinary text tokenizes exactly as spaCy does."""
    import spacy

    from dp_vocab.ingest.text.tokenizers import MAX_RUN, SpacyTokenizer
    tok = SpacyTokenizer("en")
    text = "I'm sure it's fine, don't worry: see https://example.com/a?b=c."
    assert tok(text) == [t.text for t in spacy.blank("en").tokenizer(text) if not t.is_space]
    assert tok("ok " + "🤔" * 40_000 + " end") == ["ok"] + ["🤔"] * 40_000 + ["end"]
    assert tok("x" * (MAX_RUN + 1)) == ["x" * MAX_RUN, "x"]


def test_multi_character_joiner_keeps_names_one_to_one():
    """With joiner "::", "a:" + "b" and "a" + ":b" would both join to "a:::b": tokens holding
    any character of the joiner are dropped where tokens are joined."""
    ex = ItemExtractor(str.split, n_max=2, joiner="::")
    items = ex("a: b a :b c")
    assert items == ["b", "a", "b::a", "c"]
    assert all(":" not in t for run in ex.runs("a: b a :b c") for t in run)


@pytest.mark.parametrize("tokenizer", [lambda: SpacyTokenizer("en"),
                                       lambda: HFPreTokenizer("bert")])
def test_spacy_and_hf_on_a_process_pool_equal_serial(monkeypatch, tokenizer):
    from dp_vocab.ingest.extract import extract_itemsets, extract_sequences
    from dp_vocab.data.itemsets import ItemSets
    from dp_vocab.ingest.text import parallel
    monkeypatch.setattr(parallel, "SERIAL_FIRST", 10)   # a pool even for this small corpus
    monkeypatch.setattr(parallel, "BATCH", 7)
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    from concurrent.futures import ProcessPoolExecutor
    submitted = []
    real_submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(ProcessPoolExecutor, "submit",
                        lambda self, *a: submitted.append(1) or real_submit(self, *a))
    docs = [(f"u{i % 13}", f"Doc {i}: don't stop, Mr. Smith! {i * 7} émigré") for i in range(200)]
    ex = ItemExtractor(tokenizer(), n_max=2)
    pooled = extract_itemsets(docs, ex)
    assert len(submitted) == 28   # (200 − 10) documents in batches of 7: the pool did the work
    serial = ItemSets.from_user_items((u, ex(t)) for u, t in docs)
    assert pooled.to_dict() == serial.to_dict()
    assert pooled.vocab.strings == serial.vocab.strings   # same first-seen order
    seqs = extract_sequences(docs, ex)
    strings = seqs.vocab.strings
    got = [[strings[t] for t in seqs.tokens[a:b]] for a, b in zip(seqs.seq_ptr[:-1],
                                                                   seqs.seq_ptr[1:])]
    assert got == [run for _, t in docs for run in ex.runs(t)]


SCRIPT_BODY = """
from concurrent.futures import ProcessPoolExecutor
from dp_vocab.ingest.extract import extract_itemsets
from dp_vocab.ingest.text import parallel
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import HFPreTokenizer
parallel.SERIAL_FIRST, parallel.BATCH, parallel.workers = 10, 7, lambda: 2
submitted = []
real_submit = ProcessPoolExecutor.submit
ProcessPoolExecutor.submit = lambda self, *a: submitted.append(1) or real_submit(self, *a)
print("top level ran")
def run():
    docs = [(f"u{i % 13}", f"Doc {i}: don't stop, Mr. Smith!") for i in range(200)]
    sets = extract_itemsets(docs, ItemExtractor(HFPreTokenizer("bert")))
    print("users", len(sets.to_dict()), "pool tasks", len(submitted))
"""


@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_without_a_main_guard_runs_serially_and_says_why(tmp_path, guarded):
    """forkserver workers import the main script again: a script that starts the extraction
    from its top level would start it in every worker, which multiprocessing refuses (the run
    failed with BrokenProcessPool). Such a script now extracts on one core, with a warning that
    names the fix; under `if __name__ == "__main__":` the pool does the work."""
    import subprocess
    import sys
    script = tmp_path / "script.py"
    script.write_text(SCRIPT_BODY + ('if __name__ == "__main__":\n    run()\n' if guarded
                                     else "run()\n"))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    tasks = 0 if not guarded else 28   # (200 − 10) documents in batches of 7
    lines = res.stdout.splitlines()
    assert lines[-1] == f"users 13 pool tasks {tasks}"
    if not guarded:   # no worker imported the script (a guarded one is imported, harmlessly)
        assert lines == ["top level ran", lines[-1]]
    assert ("__main__" in res.stderr and "one core" in res.stderr) is not guarded


def test_bert_kind_splits_cjk_ideographs_as_bert_does():
    """The "bert" kind makes the words BERT's own pipeline makes: each CJK ideograph a word
    (BertNormalizer's handle_chinese_chars), Hangul and kana left whole."""
    from tokenizers import normalizers, pre_tokenizers
    bert_norm = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                           strip_accents=False, lowercase=False)
    bert_pre = pre_tokenizers.BertPreTokenizer()
    ours = HFPreTokenizer("bert")
    for text in ["用于企业微信的框架 hello, world!", "한국어 도구와 カタカナ 𠀀x豈", "a中b", "代码→列表"]:
        expected = [w for w, _ in bert_pre.pre_tokenize_str(bert_norm.normalize_str(text))]
        assert ours(text) == expected
