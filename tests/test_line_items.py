"""No item holds a line break or a lone surrogate, so every one-item-per-line file stays aligned
(line i is item i / token id i) and every writer can encode every item."""

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.errors import ParameterError
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.export.lines import LINE_BREAKS, ItemNotWritableError
from dp_vocab.export.plain import PlainExporter
from dp_vocab.export.spacy import SpacyExporter
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.recipes import run_recipe
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import HFPreTokenizer, RegexTokenizer, SpacyTokenizer
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR

REPO = Path(__file__).resolve().parents[1]


def test_line_breaks_are_exactly_what_splitlines_splits_on():
    breaking = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) > 1}
    assert breaking == set(LINE_BREAKS)


@pytest.mark.parametrize("tokenizer", [RegexTokenizer(r"[^ ]+"), SpacyTokenizer("en"),
                                       HFPreTokenizer("metaspace"), RegexTokenizer()],
                         ids=["regex-nonspace", "spacy", "hf-metaspace", "regex-default"])
def test_no_extracted_item_holds_a_line_break(tokenizer):
    text = "".join(f"w{i}{ch}x{i} " for i, ch in enumerate(LINE_BREAKS)) + "end\r\nline"
    for n_max in (1, 2):
        items = ItemExtractor(tokenizer, n_max=n_max)(text)
        assert items and all(len(it.splitlines()) == 1 and it.splitlines()[0] == it
                             for it in items), items
    # split at the break, as at whitespace: both halves survive
    words = set(ItemExtractor(tokenizer)(text))
    assert {"w0", "x0"} <= {w.lstrip("▁") for w in words}


def test_lone_surrogates_become_replacement_characters():
    text = json.loads('"caf\\ud800 ok \\udfff \\ud83d\\ude00"')  # two lone, one valid pair
    for tok in (RegexTokenizer(r"[^ ]+"), RegexTokenizer(), SpacyTokenizer("en")):
        items = ItemExtractor(tok, n_max=2)(text)
        assert all(not any(0xD800 <= ord(c) <= 0xDFFF for c in it) for it in items), items
        for it in items:
            it.encode("utf-8")
    assert "caf\ufffd" in ItemExtractor(RegexTokenizer(r"[^ ]+"))(text)
    assert "\U0001F600" in ItemExtractor(RegexTokenizer(r"[^ ]+"))(text)


def test_joiner_with_a_line_break_is_refused():
    with pytest.raises(ParameterError, match="joiner"):
        ItemExtractor(RegexTokenizer(), joiner="\u2028")


def test_recipe_on_hostile_text_keeps_every_line_file_aligned(tmp_path):
    corpus = tmp_path / "c.jsonl"
    seps = list(LINE_BREAKS) + ["\r\n"]
    with open(corpus, "w", encoding="utf-8") as f:  # ensure_ascii: surrogates as \\ud800 escapes
        for u in range(80):
            text = "alpha" + "beta".join(seps) + "gamma \ud800 delta\udc00x"
            f.write(json.dumps({"user": f"u{u}", "text": text}) + "\n")
    recipe = tmp_path / "wordpiece-split-on-spaces.cfg"
    recipe.write_text((RECIPE_DIR / "private-wordpiece.cfg").read_text(encoding="utf-8")
                      .replace('@tokenizers = "dp_vocab.hf_pre_tokenizer.v1"\nkind = "bert"',
                               '@tokenizers = "dp_vocab.regex.v1"\npattern = "[^ ]+"'),
                      encoding="utf-8")
    overrides = {"paths.corpus": str(corpus), "run.seed": 3, "export.classic_files": True}
    res = run_recipe(recipe, tmp_path / "o", overrides=overrides)
    out = tmp_path / "o"
    items = res.release.items
    assert {"alpha", "beta", "gamma", "\ufffd", "delta\ufffdx"} <= set(items)
    lines = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert lines[:-1] == items and lines[-1] == ""
    jsonl = [json.loads(x)["item"] for x in (out / "vocab.jsonl").read_text("utf-8").splitlines()]
    assert jsonl == items
    tok = Tokenizer.from_file(str(out / "hf" / "tokenizer.json"))
    hf_lines = (out / "hf" / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert hf_lines == [tok.id_to_token(i) for i in range(tok.get_vocab_size(False))]


@pytest.mark.parametrize("bad", ["two\nlines", "cr\rhere", "nel\x85", "ls\u2028", "vt\x0b",
                                 "gs\x1d", "ps\u2029", "lone\ud800"])
def test_writers_refuse_hand_made_items_they_cannot_write(tmp_path, bad):
    d = ItemSets.from_user_items([(u, ["ok", bad]) for u in range(300)])
    rel = make_mechanism("count_laplace", epsilon=3, delta=1e-5, max_items_per_user=2,
                         noisy_counts=True).release(d, random=RandomSource(1))
    assert bad in rel.items
    exporters = (PlainExporter(), HFTokenizerExporter(model="wordpiece"),
                 HFTokenizerExporter(model="bpe", vocab_size=300), SpacyExporter())
    for i, exporter in enumerate(exporters):
        target = tmp_path / str(i)
        target.mkdir()
        with pytest.raises(ItemNotWritableError, match=r"released item [12]: contains"):
            exporter.export(rel, target, None)
        assert list(target.iterdir()) == []  # checked before anything is written


@pytest.mark.parametrize("noisy_counts", [False, True])
def test_vocab_jsonl_lines_are_json_dumps_of_each_record(tmp_path, noisy_counts):
    """vocab.jsonl is written in one pass; each line is what json.dumps gives the record."""
    odd = ['say "hi"', "back\\slash", "tab\there", "\x00nul", "ctl\x1f", "caf\u00e9", "\U0001F600",
           "\u00a0nbsp", "</script>", "1.5"]
    d = ItemSets.from_user_items([(u, odd) for u in range(300)])
    rel = make_mechanism("count_laplace", epsilon=3, delta=1e-5, max_items_per_user=len(odd),
                         noisy_counts=noisy_counts).release(d, random=RandomSource(1))
    assert set(rel.items) == set(odd)
    PlainExporter().export(rel, tmp_path, None)
    expected = "".join(json.dumps({"item": x, **({"noisy_count": rel.counts[x]} if noisy_counts
                                               else {})}, ensure_ascii=False) + "\n"
                       for x in rel.items)
    assert (tmp_path / "vocab.jsonl").read_bytes() == expected.encode("utf-8")
    assert (tmp_path / "vocab.txt").read_bytes() == "".join(x + "\n" for x in rel.items).encode()
