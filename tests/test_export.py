"""Exporters: round trips through the real libraries (tokenizers, transformers, spaCy) and count
releases."""

import hashlib
import json
import math
import shutil
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.mechanisms.count_release import (DiscreteGaussianCounts, DiscreteLaplaceCounts,
                                     NormalisedGaussianCounts)
from dp_vocab.errors import ParameterError
from dp_vocab.export.hf import (BYTE_PIECES, PUBLIC_ALPHABET, PUBLIC_PUNCTUATION, STYLES,
                                 HFTokenizerExporter)
from dp_vocab.export.spacy import SpacyExporter
from dp_vocab.export.trained import TRAILING_MARKS, count_floor
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.data.release import Release
from dp_vocab.ingest.text.tokenizers import DEFAULT_PATTERN
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR

REPO = Path(__file__).resolve().parents[1]
ITEMS = {"tokenizer": "regex", "pattern": DEFAULT_PATTERN, "nfkc": True, "lowercase": True}
# variants share pieces (Unigram's trainer seeds its pieces with strings that recur)
WORDS = ["the", "college", "students", "apply", "stanford", "doesn't", ",", ".", "!", "real",
         "is", "hard", "university", "then", "colleges", "student", "applying", "reality",
         "universities", "hardly", "island", "stanfords"]
HELD_OUT = "Stanford doesn't exist, COLLEGE students! Ｆｕｌｌ-width çà"
# Only released words: decode(encode(t)) must give back the normalised text exactly
KNOWN = "The University is HARD, Stanford doesn't apply! Real college students apply."
KNOWN_NORMALISED = KNOWN.lower()
# (model, style): every preset
PRESETS = [("wordlevel", "bert"), ("wordpiece", "bert"), ("bpe", "gpt2"), ("unigram", "t5"),
           ("unigram", "sentencepiece")]


def release(with_counts=True, items=None):
    items = WORDS if items is None else items
    counts = {w: 1000 // (i + 1) for i, w in enumerate(items)} if with_counts else None
    return Release(items=sorted(items), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                   randomness={"mode": "os"}, privacy={}, counts=counts)


def export(tmp_path, model, style, **kw):
    default_size = 400 if model in ("bpe", "unigram") else None   # trained towards a size
    exp = HFTokenizerExporter(model=model, style=style,
                              vocab_size=kw.pop("vocab_size", default_size), **kw)
    files = exp.export(release(), tmp_path, {"items": ITEMS}).files
    return exp, files, Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))


def surface(piece: str) -> str:
    """The text a vocabulary entry stands for (without WordPiece/Metaspace/byte-level marks)."""
    if piece.startswith("##"):
        piece = piece[2:]
    piece = piece.replace("▁", "")
    return decoders.ByteLevel().decode([piece]).strip() if "Ġ" in piece else piece


def public_or_derived(piece: str, special, byte_level: bool) -> bool:
    core = surface(piece)
    if piece in special or core == "" or core in PUBLIC_ALPHABET or piece in BYTE_PIECES \
            or core in PUBLIC_PUNCTUATION:
        return True
    if byte_level and len(piece) == 1:  # one of the 256 public byte symbols
        return True
    # a piece of a released word, or of one followed by a public mark (trained.TRAILING_MARKS)
    return any(core in w + mark for w in WORDS for mark in ("",) + TRAILING_MARKS)


@pytest.mark.parametrize("model,style", PRESETS)
def test_tokenizer_json_round_trip(tmp_path, model, style):
    exp, files, tok = export(tmp_path, model, style)
    assert {"hf/tokenizer.json", "hf/tokenizer_config.json",
            "hf/special_tokens_map.json"} <= set(files)
    vocab = tok.get_vocab()
    assert sorted(vocab.values()) == list(range(len(vocab)))
    # nothing but special tokens, released items, their pieces and public symbols
    bad = [p for p in vocab if not public_or_derived(p, exp.special_tokens, style == "gpt2")]
    assert not bad, bad
    data = json.loads((tmp_path / "hf" / "tokenizer.json").read_text())
    for part in ("normalizer", "pre_tokenizer", "model", "decoder", "post_processor"):
        assert data[part] is not None, part
    assert {t["content"] for t in data["added_tokens"] if t["special"]} == set(exp.special_tokens)

    # encode → decode gives back the normalised text
    enc = tok.encode(KNOWN)
    assert tok.decode(enc.ids) == KNOWN_NORMALISED
    assert "stanford" in "".join(enc.tokens)  # normaliser: NFKC + lower-casing
    if model in ("wordlevel", "wordpiece"):
        assert all(w in vocab for w in WORDS) and "stanford" in enc.tokens
    if style in ("gpt2", "sentencepiece", "t5"):  # bytes for unseen characters
        other = "café naïve 😀 — ∑ tab\there"
        # SentencePiece styles keep one space for any run of white space, as SentencePiece
        want = other if style == "gpt2" else " ".join(other.split())
        assert tok.decode(tok.encode(other).ids) == want
    if style != "gpt2":  # byte-level BPE has no unknown token at all
        unk = exp.style.roles["unk_token"]
        assert tok.token_to_id(unk) not in tok.encode(KNOWN, add_special_tokens=False).ids

    # special tokens are atomic, whatever the normaliser and pre-tokenizer would do to them
    for special in exp.special_tokens:
        ids = tok.encode(f"the {special} college", add_special_tokens=False).ids
        sid = tok.token_to_id(special)
        assert ids.count(sid) == 1, (special, ids)
        assert tok.decode([i for i in ids if i != sid]).split() == ["the", "college"]

    # the post-processor adds the style's markers
    ids = enc.ids
    roles = exp.style.roles
    if style == "bert":
        assert ids[0] == tok.token_to_id("[CLS]") and ids[-1] == tok.token_to_id("[SEP]")
        pair = tok.encode("the college", "real students")
        assert pair.type_ids[0] == 0 and pair.type_ids[-1] == 1
        assert pair.ids.count(tok.token_to_id("[SEP]")) == 2
    elif style == "t5":
        assert ids[-1] == tok.token_to_id("</s>") and ids[0] != tok.token_to_id("</s>")
    elif style == "sentencepiece":
        assert ids[0] == tok.token_to_id("<s>") and ids[-1] == tok.token_to_id("</s>")
    else:
        assert tok.token_to_id(roles["eos_token"]) not in ids  # GPT-2 adds nothing


def test_bpe_decodes_with_spaces_and_learns_words_from_counts(tmp_path):
    _, _, tok = export(tmp_path, "bpe", "gpt2", vocab_size=600)
    text = "the university is hard"
    assert tok.decode(tok.encode(text).ids) == text
    vocab = tok.get_vocab()
    # frequent released words become single tokens after a space: "Ġthe", "Ġcollege"
    assert "Ġthe" in vocab and "Ġcollege" in vocab
    # a word that was not released is never a token (merges come from released items only)
    assert not any("exist" in surface(p) for p in vocab)
    # any text encodes without unknowns: the 256-byte alphabet is complete
    odd = "ＺＷＳＰ ☃ ünïcödé 🙂"
    assert tok.decode(tok.encode(odd).ids) == "zwsp ☃ ünïcödé 🙂"


def test_bpe_smaller_than_vocab_size_says_what_was_made_why_and_what_to_do(tmp_path):
    for where in "abc":
        (tmp_path / where).mkdir()
    exp = HFTokenizerExporter(model="bpe", vocab_size=8000)
    notes = exp.export(release(), tmp_path / "a", {"items": ITEMS}).notes
    data = json.loads((tmp_path / "a" / "hf" / "tokenizer.json").read_text(encoding="utf-8"))
    size, merges = len(data["model"]["vocab"]), len(data["model"]["merges"])
    assert size == 256 + 1 + merges < 8000   # bytes, <|endoftext|>, every merge possible
    assert notes == [f"hf/tokenizer.json has {size:,} tokens, not the requested vocab_size = "
                     f"8,000: the {len(WORDS)} released items allow only {merges:,} BPE merges "
                     f"(+ 256 bytes and 1 special token(s)). To ask for what the release "
                     f"supports, set export.vocab_size = {size} (--export.vocab_size {size}); "
                     f"for more tokens, release more items: raise [budget] epsilon or use a "
                     f"corpus with more users."]
    # doing what the note says gives the same tokenizer and no note
    again = HFTokenizerExporter(model="bpe", vocab_size=size).export(release(), tmp_path / "b",
                                                                    {"items": ITEMS})
    assert again.notes == []
    assert (tmp_path / "b" / "hf" / "tokenizer.json").read_bytes() == \
        (tmp_path / "a" / "hf" / "tokenizer.json").read_bytes()
    # without vocab_size BPE aims at 30,000 tokens: still a note
    [note] = HFTokenizerExporter(model="bpe").export(release(), tmp_path / "c",
                                                     {"items": ITEMS}).notes
    assert f"has {size:,} tokens, not the requested vocab_size = 30,000" in note


@pytest.mark.parametrize("model,with_counts", [("wordlevel", True), ("wordpiece", False)])
def test_vocab_size_of_untrained_models_is_noted_not_silently_ignored(tmp_path, model,
                                                                      with_counts):
    """WordLevel, and WordPiece without DP counts, hold every released item: no note without
    vocab_size; with one that differs from the size made, a note says why and what to do."""
    def made(vocab_size, where):
        (tmp_path / where).mkdir()
        exp = HFTokenizerExporter(model=model, style="bert", vocab_size=vocab_size)
        notes = exp.export(release(with_counts), tmp_path / where, {"items": ITEMS}).notes
        tok = Tokenizer.from_file(str(tmp_path / where / "hf" / "tokenizer.json"))
        return tok.get_vocab_size(), notes

    size, notes = made(None, "default")
    assert notes == []
    assert made(size, "exact") == (size, [])
    head = f"hf/tokenizer.json has {size:,} tokens, not the requested vocab_size = "
    smaller = len(STYLES["bert"].special_tokens) + 1
    for asked, fix in ((size * 10, "raise [budget] epsilon"),
                       (smaller, "the top_k mechanism releases k")):
        got, [note] = made(asked, str(asked))
        assert got == size   # not a cap: the same tokenizer
        assert note.startswith(f"{head}{asked:,}: without DP counts, a {model} vocabulary "
                               f"holds the special tokens")
        assert f"from {len(WORDS)} released items. Add a [counts] section" in note
        assert fix in note


@pytest.mark.parametrize("model,style", [p for p in PRESETS if p[0] != "wordlevel"])
def test_trained_models_reach_the_size_the_counts_support(tmp_path, model, style):
    """With DP counts, BPE, WordPiece and Unigram are trained towards vocab_size: exactly that
    size when the counts support it, else the largest they support and a note saying so."""
    def made(vocab_size, where):
        (tmp_path / where).mkdir()
        exp = HFTokenizerExporter(model=model, style=style, vocab_size=vocab_size)
        notes = exp.export(release(), tmp_path / where, {"items": ITEMS}).notes
        tok = Tokenizer.from_file(str(tmp_path / where / "hf" / "tokenizer.json"))
        return tok.get_vocab_size(), notes

    most, [note] = made(20000, "most")
    assert note.startswith(f"hf/tokenizer.json has {most:,} tokens, not the requested "
                           f"vocab_size = 20,000")
    assert f"set export.vocab_size = {most}" in note
    fewer = most - 5
    assert made(fewer, "fewer") == (fewer, [])


@pytest.mark.parametrize("model,style", [("wordpiece", "bert"), ("unigram", "sentencepiece")])
def test_a_trained_tokenizer_larger_than_asked_says_it_keeps_its_alphabet(tmp_path, model,
                                                                          style):
    """At the least size accepted, a trained WordPiece or Unigram still holds its alphabet
    (and Unigram its byte pieces): the note says so and asks for more, not for fewer items."""
    specials = len(HFTokenizerExporter(model=model, style=style).special_tokens)
    least = specials + (256 if model == "unigram" else 1)
    exp = HFTokenizerExporter(model=model, style=style, vocab_size=least)
    [note] = exp.export(release(), tmp_path, {"items": ITEMS}).notes
    size = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json")).get_vocab_size()
    assert size > least
    assert note.startswith(f"hf/tokenizer.json has {size:,} tokens, not the requested "
                           f"vocab_size = {least:,}: the tokenizer keeps every character of "
                           f"its training table")
    assert f"{specials} special token(s), whatever size is asked for. Ask for more than " \
           f"{size:,} (export.vocab_size)" in note
    assert "release more items" not in note and "set export.vocab_size =" not in note


def test_unigram_is_trained_on_the_dp_counts(tmp_path):
    """Unigram's trainer scores pieces by the DP counts: with "college" far more frequent than
    "stanford(s)", ▁college scores higher; with the counts reversed, ▁stanford does."""
    def scores(counts, where):
        (tmp_path / where).mkdir()
        rel = Release(items=sorted(WORDS), mechanism="test", params={}, epsilon=1.0,
                      delta=1e-5, randomness={"mode": "os"}, privacy={}, counts=counts)
        HFTokenizerExporter(model="unigram", vocab_size=600).export(rel, tmp_path / where,
                                                                     {"items": ITEMS})
        data = json.loads((tmp_path / where / "hf" / "tokenizer.json").read_text())
        return dict(tuple(x) for x in data["model"]["vocab"])
    first = scores({w: 1000 // (i + 1) for i, w in enumerate(WORDS)}, "a")
    assert first["▁college"] > first["▁stanford"]
    last = scores({w: 1000 // (len(WORDS) - i) for i, w in enumerate(WORDS)}, "b")
    assert last["▁stanford"] > last["▁college"]


def test_unigram_keeps_a_frequent_short_unit_as_its_piece():
    """tokenizers' Unigram trainer seeds substrings by how many distinct words hold them, once
    each: on a short table of units the most frequent unit, "▁I", was seeded far below "▁" and
    "I" and encoded as "▁" + "I". Pieces learned by BPE's merges keep it one piece."""
    words = ["▁I", "▁It", "▁In", "▁If", "▁the", "▁then", "▁there", "▁college", "▁colleges",
             "▁student", "▁students", ".", ",", "s", "t", "'"]
    counts = {w: 300 for w in words} | {"▁I": 50000, ".": 60000, ",": 40000, "▁the": 30000,
                                         "s": 8000, "t": 9000, "'": 9000}
    rel = Release(items=sorted(words), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                  randomness={"mode": "os"}, privacy={}, counts=counts)
    tok = HFTokenizerExporter(model="unigram", vocab_size=400).build(
        rel, {"tokenizer": "hf_pre_tokenizer", "kind": "metaspace", "nfkc": True,
              "lowercase": False})
    assert tok.encode("I am. It", add_special_tokens=False).tokens[:2] == ["▁I", "▁"]


def test_a_released_unit_enters_training_at_least_at_the_count_noise_scale():
    """A released unit whose DP count came out at 0 or below σ is still held by users: it is
    trained at the count noise's scale σ (from the record), so BPE learns it whole; a count
    above σ is kept, and without a stated (finite, positive) σ nothing is raised."""
    words = ["Ġthe", "Ġcollege", "Ġcampus", "Ġzyzzyvas", "Ġquad"]
    counts = {"Ġthe": 900, "Ġcollege": 600, "Ġcampus": 500, "Ġzyzzyvas": 0, "Ġquad": 150}
    items = {"tokenizer": "hf_pre_tokenizer", "kind": "byte_level", "nfkc": False,
             "lowercase": False}
    exporter = HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=330)

    def release(counts_info):
        return Release(items=sorted(words), mechanism="test", params={}, epsilon=1.0,
                       delta=1e-5, randomness={"mode": "os"}, privacy={}, counts=counts,
                       counts_info=counts_info)
    info = {"noise": "discrete_gaussian", "scale": 400.0}
    assert exporter.training_units(release(info), words, items) == {
        **counts, "Ġzyzzyvas": 400.0, "Ġquad": 400.0}
    for bad in (None, {}, {"scale": 0}, {"scale": float("nan")}, {"scale": float("inf")},
                {"scale": "400"}):
        assert count_floor(release(bad)) == 0.0
        assert exporter.training_units(release(bad), words, items) == counts

    def tokens(counts_info):
        tok = exporter.build(release(counts_info), items)
        return tok.encode(" zyzzyvas", add_special_tokens=False).tokens
    assert tokens(info) == ["Ġzyzzyvas"]
    assert len(tokens(None)) > 1


def test_released_parts_of_text_without_spaces_are_byte_level_units_of_their_own():
    """``byte_level_parts`` items (a Chinese clause's characters and pairs) are trained as the
    units they are, so a clause no release keeps is read with the released pair as one token."""
    from dp_vocab.ingest.text.tokenizers import byte_level
    pair = byte_level("工具")
    counts = {"Ġthe": 900, pair: 500, byte_level("工"): 300, byte_level("具"): 300}
    items = {"tokenizer": "hf_pre_tokenizer", "kind": "byte_level_parts", "nfkc": False,
             "lowercase": False}
    rel = Release(items=sorted(counts), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                  randomness={"mode": "os"}, privacy={}, counts=counts,
                  counts_info={"noise": "discrete_gaussian", "scale": 10.0})
    exporter = HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=300)
    assert exporter.training_units(rel, sorted(counts), items) == counts
    tokens = exporter.build(rel, items).encode("是工具", add_special_tokens=False).tokens
    assert pair in tokens and "".join(tokens) == byte_level("是工具")


def test_a_character_alone_enters_unigrams_table_at_the_floor():
    """A ``_parts`` item of one character outside ASCII counts the users who write it anywhere,
    not the times it stands alone: Unigram (whose scores are shares of the table) takes it at
    ``count_floor``; words and ASCII parts keep their DP counts (byte-level BPE keeps a
    character's count: it adds only the merge of its bytes, as the test above shows)."""
    counts = {"▁café": 900.0, "é": 5000.0, "д": 700.0, ",": 400.0, "▁the": 3000.0}
    items = {"tokenizer": "hf_pre_tokenizer", "kind": "metaspace_parts", "nfkc": True,
             "lowercase": False}
    rel = Release(items=sorted(counts), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                  randomness={"mode": "os"}, privacy={}, counts=counts,
                  counts_info={"noise": "discrete_gaussian", "scale": 10.0})
    floor = count_floor(rel)
    assert 0 < floor < 400
    unigram = HFTokenizerExporter(model="unigram", style="sentencepiece", vocab_size=300)
    assert unigram.training_units(rel, sorted(counts), items) == {
        **counts, "é": floor, "д": floor}


def test_bpe_and_unigram_need_counts(tmp_path):
    with pytest.raises(ParameterError, match="counts"):
        HFTokenizerExporter(model="bpe").export(release(False), tmp_path, {"items": ITEMS})


@pytest.mark.parametrize("model,style", PRESETS)
def test_transformers_loads_pads_batches_and_round_trips(tmp_path, model, style):
    from transformers import AutoTokenizer
    exp, _, tok = export(tmp_path, model, style, model_max_length=12)
    at = AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    roles = exp.style.roles
    for role, token in roles.items():
        assert getattr(at, role) == token, role
    assert at.model_max_length == 12
    assert at(KNOWN)["input_ids"] == tok.encode(KNOWN).ids
    assert at.decode(at(KNOWN)["input_ids"], skip_special_tokens=True) == KNOWN_NORMALISED

    batch = at(["the college", KNOWN], padding=True, truncation=True)
    a, b = batch["input_ids"]
    assert len(a) == len(b) == 12  # truncated to model_max_length, padded to the longest
    pad = tok.token_to_id(roles["pad_token"])
    n_real = len(tok.encode("the college").ids)
    assert a[n_real:] == [pad] * (12 - n_real)
    assert batch["attention_mask"][0] == [1] * n_real + [0] * (12 - n_real)
    assert batch["attention_mask"][1] == [1] * 12
    if style == "bert":
        assert "token_type_ids" in batch

    at.save_pretrained(str(tmp_path / "saved"))
    again = AutoTokenizer.from_pretrained(str(tmp_path / "saved"))
    assert again(KNOWN)["input_ids"] == at(KNOWN)["input_ids"]
    assert again.special_tokens_map == at.special_tokens_map
    assert again.model_max_length == 12 and len(again) == len(at)


def test_extra_special_tokens_are_atomic_everywhere(tmp_path):
    from transformers import AutoTokenizer
    _, _, tok = export(tmp_path, "wordpiece", "bert", special_tokens=["<url>"])
    assert tok.encode("the <url> college", add_special_tokens=False).tokens == \
        ["the", "<url>", "college"]
    at = AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert "<url>" in at.all_special_tokens
    assert at.convert_ids_to_tokens(at("the <url>")["input_ids"]) == \
        ["[CLS]", "the", "<url>", "[SEP]"]


@pytest.mark.parametrize("model", ["wordlevel", "wordpiece", "bpe"])
def test_classic_files_build_the_same_model(tmp_path, model):
    exp, files, tok = export(tmp_path, model, None, classic_files=True)
    hf = tmp_path / "hf"
    if model == "wordpiece":
        lines = (hf / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
        assert lines == [tok.id_to_token(i) for i in range(tok.get_vocab_size(False))]
        classic = models.WordPiece.from_file(str(hf / "vocab.txt"), unk_token="[UNK]")
    elif model == "wordlevel":
        classic = models.WordLevel.from_file(str(hf / "vocab.json"), unk_token="[UNK]")
    else:
        merges = (hf / "merges.txt").read_text(encoding="utf-8").split("\n")
        assert all(len(m.split(" ")) == 2 for m in merges[1:] if m)  # one merge a line
        classic = models.BPE.from_file(str(hf / "vocab.json"), str(hf / "merges.txt"))
    rebuilt = Tokenizer(classic)
    rebuilt.normalizer, rebuilt.pre_tokenizer = tok.normalizer, tok.pre_tokenizer
    for text in (KNOWN, HELD_OUT):
        assert rebuilt.encode(text).ids == tok.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("kwargs,field", [
    ({"model": "gpt"}, "export.model"),
    ({"style": "roberta"}, "export.style"),
    ({"model": "wordpiece", "style": "gpt2"}, "export.style"),
    ({"model": "bpe", "vocab_size": -5}, "export.vocab_size"),
    ({"model": "bpe", "vocab_size": 100}, "export.vocab_size"),   # < 256 bytes + specials
    ({"model": "unigram", "vocab_size": 10}, "export.vocab_size"),   # < 256 byte pieces + specials
    ({"vocab_size": "big"}, "export.vocab_size"),
    ({"special_tokens": "[UNK]"}, "export.special_tokens"),
    ({"special_tokens": [""]}, "export.special_tokens"),
    ({"special_tokens": ["<a\nb>"]}, "export.special_tokens"),
    ({"classic_files": "yes"}, "export.classic_files"),
    ({"model_max_length": 0}, "export.model_max_length"),
])
def test_hf_parameters_checked_at_construction(kwargs, field):
    with pytest.raises(ParameterError, match=field.replace(".", r"\.")):
        HFTokenizerExporter(**kwargs)


def test_the_least_vocab_size_is_the_special_tokens_and_the_byte_tokens():
    """Byte-level BPE and Unigram (byte fallback) always hold 256 byte tokens besides their
    special tokens: the least size accepted is that, and the error says why."""
    for model in ("bpe", "unigram"):
        specials = len(HFTokenizerExporter(model=model).special_tokens)
        assert HFTokenizerExporter(model=model, vocab_size=specials + 256).vocab_size \
            == specials + 256
        with pytest.raises(ParameterError, match="256 byte tokens"):
            HFTokenizerExporter(model=model, vocab_size=specials + 255)
    specials = len(HFTokenizerExporter(model="wordpiece").special_tokens)
    assert HFTokenizerExporter(model="wordpiece", vocab_size=specials + 1).vocab_size \
        == specials + 1


def test_style_picks_the_model_and_model_picks_the_style():
    assert HFTokenizerExporter(style="gpt2").model == "bpe"
    assert HFTokenizerExporter(style="t5").model == "unigram"
    assert HFTokenizerExporter(model="unigram").style.name == "sentencepiece"
    assert HFTokenizerExporter().model == "wordpiece" and HFTokenizerExporter().style.name == "bert"
    assert set(STYLES) == {"bert", "gpt2", "t5", "sentencepiece"}


@pytest.mark.parametrize("recipe,override,field", [
    ("private-bpe.cfg", {"export.vocab_size": -5}, "export.vocab_size"),
    ("private-unigram.cfg", {"export.vocab_size": 10}, "export.vocab_size"),
    ("spacy-vocab.cfg", {"export.spacy.lang": "zz"}, "export.spacy.lang"),
    ("private-unigram.cfg", {"export.style": "bert"}, "export.style"),
    ("private-wordpiece.cfg", {"export.model_max_length": 0}, "export.model_max_length"),
    # caught by the recipe's type check (a RecipeError), still naming the field
    ("private-wordpiece.cfg", {"export.classic_files": "sometimes"}, "recipe: export.classic_files"),
])
def test_bad_exporter_parameter_stops_the_run_before_reading(tmp_path, recipe, override, field):
    from dp_vocab.errors import DPVocabError
    from dp_vocab.recipes import run_recipe
    # the corpus does not exist: reaching the reader would raise a CorpusError instead
    overrides = {**override, "paths.corpus": str(tmp_path / "never-read.jsonl")}
    with pytest.raises(DPVocabError) as err:
        run_recipe(RECIPE_DIR / recipe, tmp_path / "out", overrides=overrides)
    assert str(err.value).startswith(field + ": ")
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []


# ---- spaCy ------------------------------------------------------------------------------------

def spacy_export(tmp_path, lowercase=True, pipeline=True):
    out = tmp_path / "run"
    out.mkdir()
    SpacyExporter(pipeline=pipeline).export(release(), out,
                                            {"items": {**ITEMS, "lowercase": lowercase}})
    return out


def test_spacy_output_relocates_and_loads(tmp_path):
    import spacy
    out = spacy_export(tmp_path)
    assert str(tmp_path) not in (out / "spacy" / "config.cfg").read_text()
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(out), str(moved))
    total = sum(c + 1 for c in release().counts.values())
    the = math.log(1001 / total)

    nlp = spacy.load(moved / "spacy" / "pipeline")
    for form in ("the", "The", "THE"):
        assert nlp.vocab[form].prob == pytest.approx(the), form
    assert nlp.vocab["College"].prob == nlp.vocab["college"].prob > nlp.vocab["real"].prob
    assert nlp.vocab["Doesn't"].prob == nlp.vocab["doesn't"].prob
    assert nlp.vocab["not-released"].prob == -20.0  # spaCy's default for unknown lexemes
    assert "college" in spacy.vocab.Vocab().from_disk(moved / "spacy" / "vocab").strings

    # spacy assemble from the moved output directory: relative paths resolve there
    model = tmp_path / "model"
    res = subprocess.run([sys.executable, "-m", "spacy", "assemble", "spacy/config.cfg",
                          str(model)], cwd=moved, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assembled = spacy.load(model)
    assert assembled.vocab["The"].prob == pytest.approx(the)
    assert assembled.vocab["college"].prob == nlp.vocab["college"].prob


def test_spacy_pipeline_meta_states_the_guarantee_from_the_record():
    """meta.json: a real version, a spaCy range (not one patch release), and the run's
    guarantee and stages, taken from the privacy record only."""
    from dp_vocab.export.spacy import pipeline_meta
    record = {"guarantee": {"epsilon": 2.0, "delta": 1e-6, "neighbouring": "add or remove one user"},
              "ledger": [{"name": "selection", "mechanism": "m", "epsilon": 1.0, "delta": 5e-7,
                          "noise_multiplier": 0.5}],
              "released_items": 7, "randomness": {"mode": "os"}}
    meta = pipeline_meta(record, "3.8.18")
    assert meta["version"] != "0.0.0" and meta["spacy_version"] == ">=3.8.0,<4.0.0"
    assert meta["privacy"] == {"epsilon": 2.0, "delta": 1e-6,
                               "neighbouring": "add or remove one user", "released_items": 7,
                               "stages": [{"name": "selection", "mechanism": "m",
                                           "epsilon": 1.0, "delta": 5e-7}]}
    assert "(ε = 2, δ = 1e-06)-differential privacy" in meta["description"]
    assert "privacy" not in pipeline_meta(None, "3.8.18")


def test_spacy_assemble_elsewhere_fails_clearly_unless_told_where(tmp_path):
    import spacy
    from spacy.util import load_config, load_model_from_config
    from dp_vocab.errors import OutputError
    out = spacy_export(tmp_path, pipeline=False)
    assert not (out / "spacy" / "pipeline").exists()
    config = load_config(out / "spacy" / "config.cfg")
    with pytest.raises(OutputError, match="paths.dp_vocab_lookups"):  # cwd is not the output
        load_model_from_config(config, auto_fill=True).initialize()
    config = load_config(out / "spacy" / "config.cfg",
                         overrides={"paths.dp_vocab_lookups": str(out / "spacy" / "lookups")})
    nlp = load_model_from_config(config, auto_fill=True)
    nlp.initialize()
    assert nlp.vocab["The"].prob == nlp.vocab["the"].prob > -20
    assert isinstance(nlp, spacy.language.Language)


def test_spacy_cased_vocabulary_keeps_exact_forms(tmp_path):
    out = spacy_export(tmp_path, lowercase=False, pipeline=False)
    from spacy.lookups import Lookups
    table = Lookups().from_disk(out / "spacy" / "lookups").get_table("lexeme_prob")
    assert "the" in table and "The" not in table and len(table) == len(WORDS)


def test_spacy_lang_checked_at_construction():
    with pytest.raises(ParameterError, match=r"export\.lang"):
        SpacyExporter(lang="zz")
    with pytest.raises(ParameterError, match=r"export\.pipeline"):
        SpacyExporter(pipeline="yes")


# ---- count releases ---------------------------------------------------------------------------

users = st.dictionaries(st.integers(0, 20), st.lists(st.sampled_from("abcdefg"), max_size=15),
                        min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(db=users, key=st.binary(min_size=32, max_size=32), data=st.data())
def test_count_release_sensitivity(db, key, data):
    d = ItemSets.from_user_items(db.items())
    vocab = sorted({w for ws in db.values() for w in ws})
    if not vocab:
        return
    c = DiscreteLaplaceCounts(1.0, max_items_per_user=2, max_count=3)
    x = data.draw(st.sampled_from(sorted(db)))
    diff = c.true_sums(d, vocab, key) - c.true_sums(d.without_users([x]), vocab, key)
    assert np.all(diff >= 0)
    assert diff.sum() <= 2 * 3 and np.count_nonzero(diff) <= 2


@settings(max_examples=120, deadline=None)
@given(db=st.dictionaries(st.integers(0, 20),
                          st.lists(st.sampled_from("abcdefghij"), max_size=40),
                          min_size=1, max_size=8),
       key=st.binary(min_size=32, max_size=32), scale=st.integers(1, 1000),
       k=st.integers(1, 10), clip=st.integers(1, 5), data=st.data())
def test_normalised_count_release_sensitivity(db, key, scale, k, clip, data):
    """A removed user moves the sums by an integer vector of L2 norm <= scale, whatever k and C
    (the other users' contributions are their own: unchanged)."""
    d = ItemSets.from_user_items(db.items())
    vocab = sorted({w for ws in db.values() for w in ws})
    if not vocab:
        return
    c = NormalisedGaussianCounts(1.0, 1e-6, max_items_per_user=k, max_count=clip, scale=scale)
    x = data.draw(st.sampled_from(sorted(db)))
    diff = c.true_sums(d, vocab, key) - c.true_sums(d.without_users([x]), vocab, key)
    assert diff.dtype == np.int64 and np.all(diff >= 0)
    assert np.count_nonzero(diff) <= k
    assert int((diff * diff).sum()) <= scale * scale


@given(a=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=50), scale=st.integers(1, 10 ** 6))
def test_normalised_contributions_never_exceed_the_norm(a, scale):
    from dp_vocab.bounding import normalised_contributions
    v = normalised_contributions(np.array(a), np.array([0, len(a)]), scale)
    assert np.all(v == np.floor(v)) and np.all(v >= 0)
    assert int((v.astype(np.int64) ** 2).sum()) <= scale * scale
    if any(a):   # and stays close to it: each cell loses less than 1
        exact = scale * np.array(a, dtype=float) / np.sqrt(np.sum(np.square(a, dtype=float)))
        assert np.all(exact - v < 1 + 1e-9)


def test_normalised_counts_refuse_clips_whose_squares_a_float_cannot_sum_exactly():
    """The floor's margin needs each user's Σa² exact in float64 (below 2**53): max_count² ×
    max_items_per_user at or above it is refused when the stage is built, before any data."""
    from dp_vocab.bounding import EXACT_SQUARES, normalised_contributions
    k = 1000
    largest = math.isqrt((EXACT_SQUARES - 1) // k)
    NormalisedGaussianCounts(1.0, 1e-6, max_items_per_user=k, max_count=largest)
    with pytest.raises(ParameterError, match=r"counts\.max_count: expected an integer from 1 "
                                             rf"to {largest:,} with max_items_per_user = 1,000"):
        NormalisedGaussianCounts(1.0, 1e-6, max_items_per_user=k, max_count=largest + 1)
    with pytest.raises(ValueError, match="below 2\\*\\*53"):
        normalised_contributions(np.full(k, largest + 1), np.array([0, k]), 100)


def test_count_release_calibration():
    lap = DiscreteLaplaceCounts(2.0, max_items_per_user=10, max_count=4)
    assert lap.noise_scale == pytest.approx(20.0) and lap.stage().delta == 0
    g = DiscreteGaussianCounts(1.0, 1e-6, max_items_per_user=16, max_count=2)
    assert g.rho == pytest.approx((16 ** 0.5 * 2) ** 2 / (2 * g.noise_scale ** 2))
    n = NormalisedGaussianCounts(1.0, 1e-6, max_items_per_user=16, max_count=2, scale=50)
    assert n.rho == g.rho and n.rho == pytest.approx(50 ** 2 / (2 * n.noise_scale ** 2))
    d = ItemSets.from_user_items([(i, ["a", "b"]) for i in range(50)])
    got = lap.release_counts(d, ["a", "b"], RandomSource(1))
    assert set(got) == {"a", "b"} and all(v >= 0 for v in got.values())


def test_noisy_counts_threshold_is_exact():
    m = make_mechanism("count_laplace", epsilon=1.0, delta=1e-5, max_items_per_user=10,
                       noisy_counts=True)
    q = math.exp(-1 / m.noise_scale)
    fail = 1 - (1 - q ** m.threshold / (1 + q)) ** 10
    assert fail <= 1e-5 and 1 - (1 - q ** (m.threshold - 1) / (1 + q)) ** 10 > 1e-5
    d = ItemSets.from_user_items([(i, ["a"]) for i in range(400)])
    r = m.release(d, random=RandomSource(2))
    assert r.items == ["a"] and abs(r.counts["a"] - 400) < 200
    assert r.to_privacy_record()["noisy_counts"]["noise"] == "discrete_laplace"


def test_a_word_as_extra_special_token_is_refused_before_reading(tmp_path):
    from dp_vocab.recipes import run_recipe
    with pytest.raises(ParameterError, match=r"export.special_tokens: expected tokens that text "
                                             r"cannot produce as a word, got 'the'"):
        run_recipe(RECIPE_DIR / "private-wordpiece.cfg", tmp_path / "o",
                   overrides={"export.special_tokens": ["<url>", "the"],
                              "paths.corpus": str(tmp_path / "not-read.jsonl")})
    assert not (tmp_path / "o").exists()


def test_a_full_disk_in_the_tokenizers_writer_is_an_os_error(tmp_path):
    """tokenizers raises a bare Exception "... (os error 28)"; the run must see an OSError (and
    then say "No space left on device; nothing was written"), not an internal error."""
    import errno

    from dp_vocab.export.hf import _saved_model_files

    class Model:
        def __init__(self, error):
            self.error = error

        def save(self, folder):
            raise self.error

    class Tok:
        def __init__(self, error):
            self.model = Model(error)

    with pytest.raises(OSError) as e:
        _saved_model_files(Tok(Exception("No space left on device (os error 28)")), tmp_path)
    assert e.value.errno == errno.ENOSPC and e.value.strerror == "No space left on device"
    with pytest.raises(ValueError):   # anything else is not dressed up as I/O
        _saved_model_files(Tok(ValueError("other")), tmp_path)


def test_tokenizer_json_is_what_tokenizers_writes(tmp_path):
    exp, files, tok = export(tmp_path, "wordpiece", None)
    tok.save(str(tmp_path / "theirs.json"))
    assert (tmp_path / "hf" / "tokenizer.json").read_text(encoding="utf-8") == \
        (tmp_path / "theirs.json").read_text(encoding="utf-8")


# ---- a tokenizer like an existing one (export.like) ----------------------------------------------

def _source_tokenizer(folder: Path, kind: str) -> Path:
    """A small public tokenizer of each kind, saved as transformers saves one."""
    from tokenizers import normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast
    text = ["hello world, this is public text about nothing in particular at all"] * 10
    if kind == "wordpiece":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=150, special_tokens=specials)
        roles = dict(unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
                     mask_token="[MASK]")
    elif kind == "bpe":
        specials = ["<s>", "<pad>", "</s>", "<unk>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        roles = dict(bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
    else:
        specials = ["<pad>", "</s>", "<unk>"]
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=60, special_tokens=specials,
                                          unk_token="<unk>")
        roles = dict(eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
    tok.train_from_iterator(text, trainer=trainer)
    if kind == "wordpiece":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")),
                            ("[SEP]", tok.token_to_id("[SEP]"))])
    elif kind == "bpe":
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                          ("<s>", tok.token_to_id("<s>")))
    else:
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))])
    PreTrainedTokenizerFast(tokenizer_object=tok, **roles).save_pretrained(str(folder))
    return folder


def _like_recipe(corpus: Path, like, tokenizer=None, lowercase: bool = False,
                 vocab_size: int | None = None) -> dict:
    """A recipe that retrains ``like`` on ``corpus``; its items by the source's own pipeline
    unless ``tokenizer`` says otherwise."""
    tokenizer = tokenizer or {"@tokenizers": "dp_vocab.hf_tokenizer_pipeline.v1",
                              "path": str(like)}
    export = {"@exporters": "dp_vocab.hf_tokenizer.v1", "like": str(like)}
    if vocab_size is not None:
        export["vocab_size"] = vocab_size
    return {"budget": {"epsilon": 3.0, "delta": 1e-5, "counts_share": 0.5},
            "corpus": {"@readers": "dp_vocab.jsonl.v1", "path": str(corpus)},
            "items": {"@extractors": "dp_vocab.items.v1", "lowercase": lowercase, "nfkc": False,
                      "tokenizer": tokenizer},
            "mechanism": {"@mechanisms": "dp_vocab.policy_gaussian.v1"},
            "counts": {"@counts": "dp_vocab.discrete_gaussian_counts.v1", "max_count": 1},
            "export": export}


@pytest.mark.parametrize("kind", ["wordpiece", "bpe", "unigram"])
def test_a_tokenizer_like_an_existing_one_keeps_its_pipeline_and_retrains_its_model(tmp_path,
                                                                                   kind):
    """export.like: the source's normaliser, pre-tokenizer, decoder, special tokens (with their
    roles) and model type; a model trained on the released units, so released words are one
    token each; the post-processor's special ids follow the new vocabulary."""
    from transformers import AutoTokenizer
    from dp_vocab import run_recipe
    src = _source_tokenizer(tmp_path / "src", kind)
    corpus = tmp_path / "c.jsonl"
    # pairs of words: Unigram's trainer seeds whole words only when they recur inside others
    text = "love loves college colleges professor professors student students"
    corpus.write_text("\n".join(json.dumps({"user": f"u{i}", "text": text})
                                for i in range(300)) + "\n", encoding="utf-8")
    run_recipe(_like_recipe(corpus, src, vocab_size=400), tmp_path / "out")
    shutil.move(str(tmp_path / "out" / "hf"), str(tmp_path / "moved"))   # loads after a move
    before = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    after = json.loads((tmp_path / "moved" / "tokenizer.json").read_text(encoding="utf-8"))
    for part in ("normalizer", "pre_tokenizer", "decoder"):
        assert after[part] == before[part], part
    assert after["model"]["type"] == before["model"]["type"]
    assert after["model"]["vocab"] != before["model"]["vocab"]
    at = AutoTokenizer.from_pretrained(str(tmp_path / "moved"))
    source = AutoTokenizer.from_pretrained(str(src))
    assert at.special_tokens_map == source.special_tokens_map
    enc = at("love college professor student")
    words = [t for t in at.convert_ids_to_tokens(enc["input_ids"])
             if t not in at.all_special_tokens]
    assert len(words) == 4, words          # each released word is one token
    specials = [i for i in enc["input_ids"] if i in at.all_special_ids]
    # the post-processor adds the same special tokens as the source's, at the new ids
    src_added = [source.convert_ids_to_tokens(i) for i in source("x")["input_ids"]
                 if i in source.all_special_ids]
    assert [at.convert_ids_to_tokens(i) for i in specials] == src_added
    card = (tmp_path / "moved" / "README.md").read_text(encoding="utf-8")
    assert "like src" in card and hashlib.sha256(
        (src / "tokenizer.json").read_bytes()).hexdigest() in card
    assert "- Privacy unit: the user (all documents with the same value in field 'user'); " \
        in card


def test_like_keeps_extra_special_tokens_and_notes_a_source_without_roles(tmp_path):
    """A source's additional_special_tokens keep their role; a bare tokenizer.json names no
    role (no pad token for transformers): a note says so, with the fix."""
    from transformers import AutoTokenizer
    from dp_vocab import ExportNoteWarning, run_recipe
    src = _source_tokenizer(tmp_path / "src", "unigram")
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    tok.add_special_tokens(["<extra_id_0>"])
    tok.save(str(src / "tokenizer.json"))
    config = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["additional_special_tokens"] = ["<extra_id_0>"]   # as transformers 4 writes it
    (src / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"user": f"u{i}", "text": "love college student"})
                                for i in range(200)) + "\n", encoding="utf-8")

    def run(like, out):
        return run_recipe(_like_recipe(corpus, like, vocab_size=300), tmp_path / out)
    folder = run(src, "folder")
    assert not [n for n in folder.notes if "tokenizer_config.json" in n]
    loaded = AutoTokenizer.from_pretrained(str(tmp_path / "folder" / "hf"))
    assert "<extra_id_0>" in loaded.all_special_tokens and loaded.pad_token == "<pad>"
    with pytest.warns(ExportNoteWarning, match=r"export\.like 'tokenizer\.json' is a "
                      r"tokenizer\.json without a tokenizer_config\.json: the export names no "
                      r"special-token roles"):
        run(src / "tokenizer.json", "bare")


def test_like_refuses_items_of_another_pipeline_before_any_data_is_read(tmp_path):
    """Items from another pipeline (or lower-cased on top of a cased source's) would train
    pieces the source's pre-tokenizer never makes: refused, with the fix, before reading."""
    from dp_vocab.errors import RecipeError
    from dp_vocab.recipes import plan_run
    bert, uni = (_source_tokenizer(tmp_path / k, k) for k in ("wordpiece", "unigram"))
    corpus = tmp_path / "missing.jsonl"   # never opened: the check comes first
    for tokenizer, lowercase in (
            ({"@tokenizers": "dp_vocab.hf_tokenizer_pipeline.v1", "path": str(bert)},
             False),                                         # BERT's units, a Metaspace source
            ({"@tokenizers": "dp_vocab.regex.v1"}, False),
            (None, True)):                                   # the cased source lower-cased
        with pytest.raises(RecipeError, match=r"recipe \[items\]: the items are not the units "
                           r"of export\.like's tokenizer .*its pipeline makes '▁The'.*"
                           r"@tokenizers = \"dp_vocab\.hf_tokenizer_pipeline\.v1\" with path"):
            plan_run(_like_recipe(corpus, uni, tokenizer, lowercase), tmp_path / "out")
    # the source's own pipeline passes the check (and then finds no corpus)
    from dp_vocab.errors import CorpusError
    with pytest.raises(CorpusError, match="not found"):
        plan_run(_like_recipe(corpus, uni), tmp_path / "out")


def test_like_is_checked_before_any_data_is_read(tmp_path):
    src = _source_tokenizer(tmp_path / "src", "wordpiece")
    with pytest.raises(ParameterError, match="export.like"):
        HFTokenizerExporter(like=str(tmp_path / "missing"))
    with pytest.raises(ParameterError, match=r"export\.like: .*Remove export\.model and "
                       r"export\.style \(on the command line: --export\.model null "
                       r"--export\.style null\)"):
        HFTokenizerExporter(like=str(src), model="bpe", style="gpt2")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(ParameterError, match="like"):
        HFTokenizerExporter(like=str(tmp_path / "bad.json"))


def test_trained_wordpiece_holds_every_character_as_start_and_continuation(tmp_path):
    """'q' starts every released word it is in, so the trainer learns no '##q'; the export
    still reads a word with an inner q (and any printable ASCII character) without [UNK], at
    the size asked for. '~' is always a word of its own here (the regex items), so it only
    starts words."""
    words = ["qa", "qb", "qab", "ab", "ba", "aab", "bba", "abab"]
    rel = Release(items=sorted(words), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                  randomness={"mode": "os"}, privacy={},
                  counts={w: 100 - i for i, w in enumerate(words)})
    exp = HFTokenizerExporter(model="wordpiece", vocab_size=200)
    exp.export(rel, tmp_path, {"items": ITEMS})
    tok = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    vocab = tok.get_vocab()
    assert "##q" in vocab and "~" in vocab and "##~" not in vocab
    assert tok.get_vocab_size() == 200 or len(vocab) <= 200
    assert "[UNK]" not in tok.encode("aqa b~q", add_special_tokens=False).tokens


def test_a_character_always_alone_gets_no_continuing_piece_and_its_place_goes_to_a_merge():
    """A WordPiece continuing piece of a character the pre-tokenizer always splits off (BERT:
    punctuation) could never be used: train_model leaves it out and learns one more merge in its
    place, at the same size."""
    from dp_vocab.export.trained import train_model
    counts = {w: 300 - i for i, w in enumerate(WORDS)}
    alphabet = sorted(set("".join(counts)) | set(PUBLIC_ALPHABET.lower()))
    alone = frozenset(string.punctuation)
    plain = train_model("wordpiece", counts, 150, ["[UNK]"], alphabet, "[UNK]")["vocab"]
    lean = train_model("wordpiece", counts, 150, ["[UNK]"], alphabet, "[UNK]",
                       alone=alone)["vocab"]
    assert len(plain) == len(lean) == 150
    dead = {p for p in plain if p.startswith("##") and p[2:] in alone}
    assert len(dead) == len(alone)
    assert not [p for p in lean if p.startswith("##") and p[2:] in alone]
    assert set(plain) - dead < set(lean)   # the same pieces, and merges in the freed places
    assert all(ch in lean for ch in alone)


@pytest.mark.parametrize("kind", ["bert", "regex"])
def test_trained_wordpiece_holds_public_punctuation_once_and_no_unusable_pieces(tmp_path, kind):
    """Curly quotes, dashes and other Unicode punctuation are in every trained WordPiece, so
    English text does not lose them to [UNK] in a run whose release missed one; characters the
    exported pre-tokenizer always splits off (BERT: punctuation, CJK ideographs) only start
    words, while an apostrophe the regex items keep inside words ("doesn't") also continues."""
    items = ITEMS if kind == "regex" else {"tokenizer": "hf_pre_tokenizer", "kind": "bert",
                                           "nfkc": True, "lowercase": True}
    words = WORDS + ["码", "“", "”"]
    rel = release(items=words)
    HFTokenizerExporter(model="wordpiece", vocab_size=300).export(rel, tmp_path, {"items": items})
    tok = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    vocab = tok.get_vocab()
    assert all(ch in vocab for ch in PUBLIC_PUNCTUATION + "码,.!")
    # regex items: \w joins ideographs and connector punctuation (‿) to words, and ' or ’
    # between letters
    alone = set("“”—•,.!~") | (set(PUBLIC_PUNCTUATION + string.punctuation + "码")
                               if kind == "bert" else set())
    assert not [p for p in vocab if p.startswith("##") and p[2:] in alone]
    assert ("##'" in vocab) == ("##’" in vocab) == ("##码" in vocab) == ("##‿" in vocab) \
        == (kind == "regex")
    text = "“Stanford” — the college’s 码… ‘real’ • students‽"
    assert "[UNK]" not in tok.encode(text, add_special_tokens=False).tokens


def test_public_punctuation_is_the_unicode_punctuation_its_comment_names():
    import unicodedata
    from tokenizers import normalizers
    norm = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    derived = set()
    for cp in [*range(0xA0, 0x100), *range(0x2000, 0x2070)]:
        ch = norm.normalize_str(chr(cp))
        if unicodedata.category(chr(cp)).startswith("P") and len(ch) == 1 \
                and ch not in string.punctuation and unicodedata.category(ch).startswith("P"):
            derived.add(ch)
    assert "".join(sorted(derived)) == PUBLIC_PUNCTUATION


def test_training_counts_keep_resolution_within_the_word_budget():
    from dp_vocab.export.trained import training_counts
    # weighted-user counts below 1 are scaled up until the smallest is 100
    assert training_counts({"a": 0.5, "b": 2.0}, 10 ** 6) == {"a": 100, "b": 400}
    # large tables are scaled down to the budget; every unit keeps at least 1
    got = training_counts({"a": 1e9, "b": 1.0}, 1000)
    assert got["b"] == 1 and 990 <= sum(got.values()) <= 1001
    # no unit with white space, none without a positive count
    assert training_counts({"a b": 5.0, "c": 0.0, "d": -1.0, "e": 3.0}, 100) == {"e": 100}


@pytest.mark.parametrize("model", ["bpe", "wordpiece", "unigram"])
def test_the_same_counts_always_train_the_same_model(model):
    """A record is a function of the release: tokenizers' WordPiece and Unigram trainers break
    ties in hash order, which train_model removes (equal counts make ties on purpose)."""
    from dp_vocab.export.trained import train_model
    mark = "▁" if model == "unigram" else ""
    counts = {mark + w: 300 for w in WORDS}
    alphabet = sorted(set("".join(counts)) | set(PUBLIC_ALPHABET.lower()))
    made = {json.dumps(train_model(model, counts, 400, ["<unk>"], alphabet, "<unk>"))
            for _ in range(12)}
    assert len(made) == 1


def test_model_card_names_the_model_the_noise_and_its_own_files():
    """The card sits inside hf/ (the folder users upload): its file list is relative to it; a
    zCDP-accounted stage names its noise (discrete Gaussian), not its accounting."""
    from dp_vocab.export.model_card import model_card
    record = {"guarantee": {"epsilon": 3.0, "delta": 1e-5},
              "composition": {"stages": [
                  {"name": "selection", "mechanism": "m", "epsilon": 1.5, "delta": 5e-6,
                   "noise": "gaussian"},
                  {"name": "counts", "mechanism": "c", "epsilon": 1.5, "delta": 5e-6,
                   "noise": "zcdp", "rho": 0.0599}]}}
    card = model_card(record, "bpe", "gpt2 style", 8000,
                      ["hf/tokenizer.json", "hf/README.md"])
    assert "# A BPE tokenizer (GPT-2 style) trained with differential privacy" in card
    assert "| counts | `c` | 1.5 | 5e-06 | discrete Gaussian (ρ-zCDP, ρ = 0.0599) |" in card
    assert "- `tokenizer.json`" in card and "hf/" not in card.split("## Files")[1]
    assert "# A Unigram tokenizer (like src.json)" in model_card(record, "unigram",
                                                                 "like src.json", 10, [])
    # the extractor's settings in words, as a recipe writes them
    record["items"] = {"tokenizer": "hf_pre_tokenizer", "kind": "bert_parts", "lowercase": True}
    card = model_card(record, "bpe", "gpt2 style", 8000, [])
    assert "- Private: the corpus's text, split into items by the settings privacy.json " \
        "records under `items`: `tokenizer = \"hf_pre_tokenizer\"`, `kind = \"bert_parts\"`, " \
        "`lowercase = true`." in card
    # a pipeline's file by its name, not the path it had on the machine that ran
    record["items"] = {"tokenizer": "hf_tokenizer_pipeline", "path": "/home/someone/tok.json"}
    card = model_card(record, "bpe", "gpt2 style", 8000, [])
    assert "`path = \"tok.json\"`" in card and "/home/someone" not in card
    # each public list says what it was for
    record["privacy"] = {"public_domain": {"source": "wordfreq:en", "items": 1000,
                                           "sha256": "ab" * 32}}
    card = model_card(record, "bpe", "gpt2 style", 8000, [], public=[
        {"source": "wordfreq:en (wordfreq 3.1.1; the trainer's prior)", "items": 50,
         "sha256": "cd" * 32}])
    assert f"- `wordfreq:en` (the selection's public candidates): 1,000 items, SHA-256 " \
        f"`{'ab' * 32}`" in card
    assert "- `wordfreq:en (wordfreq 3.1.1; the trainer's prior)`: 50 entries" in card


def test_model_card_of_a_seeded_run_says_it_is_not_for_release():
    """A seeded run's noise can be recomputed from its seed: its card says so, in the
    Guarantee section, and a run with the operating system's randomness carries no warning."""
    from dp_vocab.export.model_card import model_card
    record = {"guarantee": {"epsilon": 3.0, "delta": 1e-5}, "released_items": 12345,
              "randomness": {"mode": "seeded (not for release)", "seed": 7}}
    card = model_card(record, "bpe", "gpt2 style", 8000, [])
    guarantee = card.split("## Guarantee")[1].split("## Inputs")[0]
    assert "**Not for release: a seeded run** (`run.seed = 7`)" in guarantee
    assert "- Released: 12,345 items" in guarantee
    for mode in ({"mode": "os"}, None):
        record["randomness"] = mode
        assert "Not for release" not in model_card(record, "bpe", "gpt2 style", 8000, [])


def test_punctuated_forms_only_where_the_pre_tokenizer_keeps_marks_in_the_unit():
    """Metaspace keeps a word's marks in its unit (▁word., ▁(word): each unit of letters gets
    its full stop and comma forms, where the table lacks them, at the mark's share of the
    released letter units' DP counts, and its form without the marker (as read after a mark)
    at the share of released units with letters after marks; a mark the release never shows
    adds nothing, and a pre-tokenizer that splits punctuation off (BERT, GPT-2) gets nothing."""
    from tokenizers import pre_tokenizers
    from dp_vocab.export.trained import with_punctuated_forms

    def units_of(pre):
        return lambda text: [u for u, _ in pre.pre_tokenize_str(text)]
    released = {"▁college": 900.0, "▁student": 100.0, "▁college.": 50.0, "▁don't": 100.0,
                "▁42": 50.0, ".": 900.0, "▁(college": 20.0, "▁(42": 30.0}
    table = {**released, "▁prior": 40.0}   # the public prior's words come in after the release
    out = with_punctuated_forms(table, released, units_of(pre_tokenizers.Metaspace("▁")))
    share = 50.0 / (900 + 100)             # "▁college." against the released letter units
    assert out["▁student."] == 100 * share and out["▁prior."] == 40 * share
    assert out["▁college."] == 50.0        # a released form keeps its DP count
    after = 20.0 / (900 + 100)             # "▁(college": letters after a mark ("▁(42" is not)
    assert out["college"] == 900 * after and out["prior"] == max(1.0, 40 * after)
    assert out["student"] == max(1.0, 100 * after)
    # no comma released: no comma form; no form of a form
    assert set(out) - set(table) == {"▁student.", "▁prior.", "college", "student", "prior"}
    for pre in (pre_tokenizers.BertPreTokenizer(),
                pre_tokenizers.ByteLevel(add_prefix_space=False)):
        assert with_punctuated_forms(table, released, units_of(pre)) == table


def test_released_parts_with_letters_after_marks_set_the_share_of_unmarked_forms():
    """A released part (``metaspace_parts``) of marks then letters, ``-based`` or ``://www``, is
    letters read after a mark as ``▁(word`` is: it counts towards the share at which each unit
    of letters also enters without its marker. Without such parts no unmarked form is added."""
    from tokenizers import pre_tokenizers
    from dp_vocab.export.trained import with_punctuated_forms

    def units_of(text):
        return [u for u, _ in pre_tokenizers.Metaspace("▁").pre_tokenize_str(text)]
    units = {"▁college": 900.0, "▁student": 100.0, "/42": 10.0}
    released = {**units, "-based": 40.0, "://www": 10.0}
    out = with_punctuated_forms(released, released, units_of)
    share = (40.0 + 10.0) / (900 + 100 + 40)   # "-based" is also a letter unit, "://www" not
    assert out["college"] == pytest.approx(900 * share) and out["student"] == pytest.approx(100 * share)
    assert set(out) - set(released) == {"college", "student"}
    assert with_punctuated_forms(units, units, units_of) == units


def test_public_words_take_the_forms_the_release_writes_words_in():
    """wordfreq folds case and place, so a public word's frequency is split over the forms the
    released letter units are written in (after a space or not, lower-case, Capitalised, in
    CAPITALS), at their shares of the DP counts; never above the smallest released count. A
    pipeline that lower-cases keeps one case, and Metaspace, which marks every word, one place."""
    from tokenizers import normalizers, pre_tokenizers
    from dp_vocab.export.trained import PublicPrior, word_forms

    def units_of(pre, lower=False):
        return lambda text: [u for u, _ in pre.pre_tokenize_str(text.lower() if lower else text)]
    gpt2 = units_of(pre_tokenizers.ByteLevel(add_prefix_space=False))
    released = {"Ġcollege": 600.0, "ĠCollege": 200.0, "College": 100.0, "college": 50.0,
                "ĠUSA": 50.0, ".": 900.0, "ĠMcGill": 40.0, "Ġ42": 30.0}
    shares = {form("word") if form else " word": s for form, s in word_forms(released, gpt2)}
    assert shares == {" word": 0.6, " Word": 0.2, "Word": 0.1, "word": 0.05, " WORD": 0.05}
    prior = PublicPrior("wordfreq:en", words=2000)
    big = {u: c * 1000 for u, c in released.items()}
    out = prior.fill(big, gpt2, 0)
    freq, total = dict(prior.frequencies())["because"], sum(big.values())
    assert 1 < freq * 0.05 * total and freq * 0.6 * total < 30_000
    assert out["Ġbecause"] == freq * 0.6 * total and out["Because"] == freq * 0.1 * total
    assert out["ĠBECAUSE"] == freq * 0.05 * total and "BECAUSE" not in out
    assert max(c for u, c in out.items() if u not in big) == 30_000   # the smallest released
    assert {u: c for u, c in out.items() if u in big} == big
    bert = units_of(pre_tokenizers.BertPreTokenizer(), lower=True)
    assert word_forms({"college": 5.0, "usa": 1.0}, bert) == [(None, 1.0)]
    meta = units_of(pre_tokenizers.Metaspace("▁"))
    forms = word_forms({"▁college": 3.0, "▁College": 1.0, "college": 9.0}, meta)
    assert [(form and form("word"), s) for form, s in forms] == [(None, 0.75), (" Word", 0.25)]
    assert word_forms({".": 3.0, "Word": 1.0}, gpt2) == [(None, 1.0)]


def test_the_usage_ratio_is_the_median_over_listed_units_predicted_high():
    """The median of DP count over prediction (0 when not released) over the listed units
    predicted at USAGE_FROM times the smallest released count or more; units predicted lower
    do not count; at most 1; 1 when fewer than USAGE_UNITS units are predicted that high."""
    from dp_vocab.export.trained import USAGE_FROM, USAGE_UNITS, usage_ratio
    m = 10.0
    high = {f"w{i}": USAGE_FROM * m * (1 + i) for i in range(2 * USAGE_UNITS + 1)}
    low = {f"x{i}": USAGE_FROM * m * 0.99 for i in range(5 * USAGE_UNITS)}
    half = {u: 0.3 * p for i, (u, p) in enumerate(high.items()) if i % 2 == 0}   # one more
    assert usage_ratio({**high, **low}, half, m) == pytest.approx(0.3)
    one_short = dict(list(half.items())[1:])
    assert usage_ratio({**high, **low}, one_short, m) == 0.0
    assert usage_ratio(high, {u: 5 * p for u, p in high.items()}, m) == 1.0
    few = dict(list(high.items())[:USAGE_UNITS - 1])
    assert usage_ratio({**few, **low}, {}, m) == 1.0
    assert usage_ratio({**few, **low}, {}, m / 2) == 0.0   # now the low ones count too


def test_public_words_are_scaled_by_how_the_corpus_uses_the_list():
    """A release that holds the list's frequent words at their predicted counts keeps the
    prior as it is; one that leaves them unreleased (a corpus of code or package names)
    scales every listed unit's count by the usage ratio, never below 1."""
    from tokenizers import pre_tokenizers
    from dp_vocab.export.trained import USAGE_FROM, PublicPrior, usage_ratio

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)

    def gpt2(text):
        return [u for u, _ in pre.pre_tokenize_str(text)]
    prior = PublicPrior("wordfreq:en", words=3000)
    freq = dict(prior.frequencies())
    words = [w for w, _ in prior.frequencies() if len(gpt2(" " + w)) == 1]
    # English-like: the 1,000 most frequent words released at 3 times their frequency, and
    # only those are predicted high enough to count
    english = {"Ġ" + w: 3e6 * freq[w] for w in words[:1000]}
    smallest = 1.5 * freq[words[999]] * sum(english.values()) / USAGE_FROM
    english["Ġzq"] = smallest
    # code-like: the same total, on units no list holds
    code = {"Ġdef": sum(english.values()) - smallest, "Ġzq": smallest}
    for released, expect in ((english, 1.0), (code, 0.0)):
        out = prior.fill(released, gpt2, 0)
        total = sum(released.values())
        predicted = {"Ġ" + w: freq[w] * total for w in words}
        assert sum(p >= USAGE_FROM * smallest for p in predicted.values()) >= 150
        assert usage_ratio(predicted, released, smallest) == expect
        for w in words[1000:1003] + words[2000:2003]:
            assert out["Ġ" + w] == max(1.0, expect * min(smallest, freq[w] * total))
        assert {u: c for u, c in out.items() if u in released} == released


def test_public_characters_by_their_expected_frequency_until_few_words_lack_one():
    """The prior's new characters come in order of the frequency of the listed words holding
    them, at their list's share, the fewest that leave under UNCOVERED of the words with a
    character outside the alphabet, and never more than asked."""
    from dp_vocab.export.trained import UNCOVERED, _new_characters
    english = [(["ab"], 0.5), (["ax"], 0.2), (["b", "y"], 0.05), (["q"], UNCOVERED / 10)]
    chinese = [(["z"], 0.9), (["zw"], 0.1)]
    lists = [(english, 0.9), (chinese, 0.1)]
    # x 0.18, z 0.1, y 0.045, w 0.01, q: each word but q's covered leaves under UNCOVERED
    assert _new_characters(lists, {"a", "b"}, 10) == {"x", "z", "y", "w"}
    assert _new_characters(lists, {"a", "b"}, 2) == {"x", "z"}
    assert _new_characters([(english, 0.001), (chinese, 0.999)], {"a", "b"}, 2) == {"z", "w"}
    assert _new_characters(lists, {"a", "b"}, 0) == set()


def test_a_public_word_the_pipeline_splits_counts_for_each_of_its_units():
    """BERT makes each CJK ideograph a word of its own: a Chinese word of two ideographs
    brings both into the table, each with the word's frequency added to its own."""
    from tokenizers import normalizers, pre_tokenizers
    from dp_vocab.export.trained import PublicPrior, _first_words
    norm = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()

    def bert(text):
        return [u for u, _ in pre.pre_tokenize_str(norm.normalize_str(text))]
    released = {"college": 800_000.0, "一": 50_000.0, "的": 20_000.0, ".": 900_000.0}
    out = PublicPrior("wordfreq:en", words=100).fill(released, bert, 4000)
    share, total = 70_000.0 / 870_000, sum(released.values())
    zh = _first_words("zh", 50_000)
    alone = {w for w, _ in zh if len(w) == 1}
    # the most frequent two-ideograph word with an ideograph never listed alone
    word, f = next((w, f) for w, f in zh if len(w) == 2 and len(bert(w)) == 2
                   and w[1] not in alone and w[1] != w[0])
    assert out[word[1]] >= min(20_000.0, f * total * share)
    assert word not in out


def test_public_words_of_the_scripts_the_release_holds():
    """A release with units in other scripts brings those scripts' public word lists into the
    trainer's table, at the script's share of the released letter units' DP counts (Chinese
    words alone, as written without spaces); no script, no list; the prior's own language's
    script adds nothing."""
    from tokenizers import pre_tokenizers
    from dp_vocab.export.hf import _byte_level_text
    from dp_vocab.export.trained import SCRIPT_WORDS, PublicPrior, _first_words

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)

    def gpt2(text):
        return [u for u, _ in pre.pre_tokenize_str(text)]
    [ru], [zh] = gpt2(" библиотека"), gpt2("一个")
    released = {"Ġcollege": 800_000.0, ru: 150_000.0, zh: 50_000.0, ".": 900_000.0}
    prior = PublicPrior("wordfreq:en", words=1000)
    lists = prior.script_lists(released, gpt2, _byte_level_text)
    shares = {(made[0][0][0], share) for made, share in lists}   # each list's first word
    assert shares == {(gpt2(" " + _first_words("ru", 1)[0][0])[0], 0.15),
                      (gpt2(_first_words("zh", 1)[0][0])[0], 0.05)}
    out = prior.fill(released, gpt2, 800, _byte_level_text)
    total = sum(released.values())
    for lang, lead, share in (("ru", " ", 0.15), ("zh", "", 0.05)):
        [unit] = gpt2(lead + _first_words(lang, 1)[0][0])
        # every listed word the pipeline makes this unit of, or splits into it, counts
        f = sum(f * gpt2(lead + w).count(unit) for w, f in _first_words(lang, SCRIPT_WORDS))
        assert out[unit] == pytest.approx(min(50_000.0, f * share * total), rel=1e-12)
    # a released unit in a script brings only the list's units whose count reaches 1, not
    # the whole list at 1 each (share 1e-6: none; share 1%: the most frequent); WordPiece's
    # table keeps every word
    for count in (2.0, 20_000.0):
        few = {"Ġcollege": 1_000_000.0, ".": 999_999.0, ru: count}
        kept = prior.fill(few, gpt2, 800, _byte_level_text)
        every = prior.fill(few, gpt2, 800, _byte_level_text, every_script_word=True)
        cyrillic = [u for u in every if u not in few and ("Ð" in u or "Ñ" in u)]
        assert len(cyrillic) > 300 and all(every[u] >= 1.0 for u in cyrillic)
        assert all(kept[u] == every[u] >= 1.0 for u in cyrillic if u in kept)
        n = sum(u in kept for u in cyrillic)
        assert n == 0 if count == 2.0 else 0 < n < len(cyrillic) / 2
    assert prior.script_lists({"Ġcollege": 5.0}, gpt2, _byte_level_text) == []
    assert PublicPrior("wordfreq:ru", words=10).script_lists({ru: 5.0}, gpt2,
                                                             _byte_level_text) == []
    assert {d["source"].split()[0] for d in prior.describe()} == {
        "wordfreq:en", "wordfreq:zh", "wordfreq:ja", "wordfreq:ko", "wordfreq:ru",
        "wordfreq:ar", "wordfreq:he", "wordfreq:el", "wordfreq:hi"}
    # the model card names the lists of the scripts the release holds, not every one
    from dp_vocab.export.trained import script_languages
    langs = script_languages(map(_byte_level_text, ["Ġcollege", ru, "ĠÎ±", "Ġcafé", "1"]))
    assert langs == {"ru", "el"}
    assert [d["source"].split()[0] for d in prior.describe(langs)] == [
        "wordfreq:en", "wordfreq:el", "wordfreq:ru"]
    assert [d["source"].split()[0] for d in prior.describe(set())] == ["wordfreq:en"]


def test_a_tokenizer_resting_mostly_on_the_public_prior_says_so():
    """Released items under a tenth of the tokenizer's size: a note says the public prior made
    most of it, with what to do; a function of the release's size and parameters only."""
    exp = HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=8000,
                              public_prior="wordfreq:en")
    few = release(items=[f"w{i}" for i in range(799)])
    note = exp.prior_note(8000, few)
    assert note.startswith("hf/tokenizer.json's 8,000 tokens rest mostly on the public prior "
                           "(wordfreq:en): only 799 items were released")
    assert "raise [budget] epsilon" in note
    assert exp.prior_note(8000, release(items=[f"w{i}" for i in range(800)])) is None
    assert exp.prior_note(8000, release(with_counts=False, items=["a", "b"])) is None
    assert HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=8000).prior_note(
        8000, few) is None
