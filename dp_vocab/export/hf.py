"""Hugging Face export: a complete ``tokenizer.json`` plus the files ``transformers`` loads.

Four presets (``style``), each a full pipeline — normaliser, pre-tokenizer, model, decoder,
post-processor and special tokens marked special:

- ``bert``: WordPiece (or WordLevel) over the released words; the pre-tokenizer that extracted
  the items; ``[CLS] A [SEP]``; ``[PAD] [UNK] [CLS] [SEP] [MASK]``.
- ``gpt2``: byte-level BPE, no unknown token. The 256-byte alphabet is public; the merges are
  trained by ``tokenizers``' trainer on the released items' DP counts (``trained.py``).
- ``t5``: Metaspace Unigram, ``</s>`` appended, ``<pad> </s> <unk>``.
- ``sentencepiece``: Metaspace Unigram, ``<s> A </s>``, ``<unk> <s> </s> <pad>``.

The normaliser is the one that extracted the items (NFKC, lower-casing; Metaspace styles also
handle white space as SentencePiece), so ``decode(encode(t))`` gives the normalised ``t`` (BERT
style: up to spacing around punctuation). Every vocabulary entry is a special token, a released
item, a piece of released items (Metaspace: also of a released item followed by a full stop or
comma), or public (the 256 bytes; characters; with ``public_prior``, the public list's words
and their pieces).
The files are written as JSON by us: ``transformers`` is not needed to export, only to load.
"""

from __future__ import annotations

import json
import math
import os
import re
import string
from pathlib import Path
from typing import cast

from ..errors import ParameterError
from ..data.release import Release
from .exported import Exported
from .lines import LINE_BREAK, LONE_SURROGATE, check_items_writable
from .like import LikeSource
from .model_card import model_card
from ..ingest.text.tokenizers import bert_pre_tokenizer, sentencepiece_whitespace
from .trained import (BYTE_PIECES, PublicPrior, bpe_merges, count_floor, script_languages,
                      train_model, training_counts, with_byte_pieces, with_punctuated_forms)

MODELS = ("wordlevel", "wordpiece", "bpe", "unigram")
# Models trained on DP counts train towards vocab_size; without counts, WordPiece and WordLevel
# hold every released item (no target size)
DEFAULT_VOCAB_SIZE = 30000


class Style:
    """What a preset fixes: special tokens by role, the template, the models it fits."""

    def __init__(self, name, models, roles, single, pair, max_length, pieces):
        self.name, self.models, self.roles = name, models, roles
        self.single, self.pair, self.model_max_length, self.pieces = single, pair, max_length, pieces

    @property
    def special_tokens(self) -> list[str]:
        return list(dict.fromkeys(self.roles.values()))


STYLES = {
    "bert": Style("bert", ("wordpiece", "wordlevel"),
                  {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                   "sep_token": "[SEP]", "mask_token": "[MASK]"},
                  "[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", 512, "items"),
    "gpt2": Style("gpt2", ("bpe",),
                  {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
                  None, None, 1024, "byte_level"),
    "t5": Style("t5", ("unigram",),
                {"pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"},
                "$A </s>", "$A </s> $B:1 </s>:1", 512, "metaspace"),
    "sentencepiece": Style("sentencepiece", ("unigram",),
                           {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>",
                            "pad_token": "<pad>"},
                           "<s> $A </s>", "<s> $A </s> $B:1 </s>:1", 512, "metaspace"),
}
DEFAULT_STYLE = {"wordlevel": "bert", "wordpiece": "bert", "bpe": "gpt2", "unigram": "sentencepiece"}
DEFAULT_ITEMS = {"tokenizer": "regex", "nfkc": True, "lowercase": True,
                 "pattern": r"\w+(?:['’]\w+)*|[^\w\s]"}
METASPACE = "▁"


def _normalizer(items: dict, metaspace: bool = False):
    """The extractor's normalisation; for Metaspace styles, then SentencePiece's white space."""
    from tokenizers import normalizers
    steps: list[normalizers.Normalizer] = []
    if items.get("nfkc", True):
        steps.append(normalizers.NFKC())
    if items.get("lowercase", True):
        steps.append(normalizers.Lowercase())
    if metaspace:
        steps.append(sentencepiece_whitespace())
    return normalizers.Sequence(steps) if steps else None


def _items_pre_tokenizer(items: dict):
    """The pre-tokenizer that split the corpus into the released items (BERT style)."""
    from tokenizers import Regex, pre_tokenizers
    kind = items.get("tokenizer")
    if kind == "regex":
        return pre_tokenizers.Sequence([
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Split(Regex(items["pattern"]), behavior="isolated")])
    if kind == "hf_pre_tokenizer":
        # byte-level / metaspace items carry space marks; BERT style uses their surface text
        return {"whitespace": pre_tokenizers.Whitespace,
                "whitespace_split": pre_tokenizers.WhitespaceSplit,
                "bert": bert_pre_tokenizer,
                "bert_parts": bert_pre_tokenizer,
                "byte_level": bert_pre_tokenizer,
                "byte_level_parts": bert_pre_tokenizer,
                "metaspace": pre_tokenizers.WhitespaceSplit,
                "metaspace_parts": pre_tokenizers.WhitespaceSplit}[items["kind"]]()
    # spaCy's rules have no HF equivalent: BERT's split on whitespace and punctuation is closest
    return bert_pre_tokenizer()


BYTE_LEVEL_KINDS = ("byte_level", "byte_level_parts")


def _surface(item: str, items: dict) -> str:
    """The text an item stands for (items from byte-level / metaspace pre-tokenizers are marked)."""
    if items.get("tokenizer") == "hf_pre_tokenizer" and items.get("kind") in BYTE_LEVEL_KINDS:
        from tokenizers import decoders
        return decoders.ByteLevel().decode([item]).strip()
    return item.replace(METASPACE, " ").strip()


# Public characters every WordPiece/Unigram vocabulary holds, so common text has no unknowns
PUBLIC_ALPHABET = string.ascii_letters + string.digits + string.punctuation
# Unicode punctuation (category P) of the Latin-1 Supplement and General Punctuation blocks as
# NFKC and lower-casing leave it, also in every trained WordPiece vocabulary: curly quotes and
# dashes are common in English text, and a punctuation item outside the public list can miss
# its release in any run. BERT's pre-tokenizer makes each a word of its own: one place each.
PUBLIC_PUNCTUATION = ("¡§«¶·»¿‐‒–—―‖‘’‚‛“”„‟†‡•‣‧‰‱′‵‸‹›※‽‿⁀⁁⁂⁃⁅⁆⁊⁋⁌⁍⁎⁏⁐⁑⁓⁔⁕⁖⁘⁙⁚⁛⁜⁝⁞")


def _alphabet(words, items: dict) -> list[str]:
    """The characters of the released items, plus the public ASCII alphabet as the normaliser
    leaves it (no upper case after lower-casing: such pieces could never be used)."""
    public = PUBLIC_ALPHABET.lower() if items.get("lowercase", True) else PUBLIC_ALPHABET
    return sorted({ch for w in words for ch in w} | set(public))


def _check_int(name: str, value, minimum: int, maximum: int = 2 ** 31 - 1,
               fix: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ParameterError(name, value, f"an integer from {minimum} to {maximum:,}", fix)
    return value


def _check_vocab_size(value, specials: int, byte_tokens: bool) -> int:
    fix = (f"A byte-level BPE or a Unigram with byte fallback always holds its {specials} "
           f"special token(s) and 256 byte tokens." if byte_tokens else
           f"The tokenizer holds its {specials} special token(s) and at least one other token.")
    return _check_int("export.vocab_size", value, specials + (256 if byte_tokens else 1),
                      fix=fix)


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, value, "true or false")
    return value


class HFTokenizerExporter:
    """Writes ``hf/tokenizer.json``, ``hf/tokenizer_config.json``, ``hf/special_tokens_map.json``
    (``AutoTokenizer.from_pretrained("out/hf")``), and with ``classic_files`` ``vocab.txt``
    (WordPiece) or ``vocab.json`` (+ ``merges.txt`` for BPE). BPE and Unigram need DP counts.
    With DP counts, BPE, WordPiece and Unigram are learned by ``tokenizers``' BPE trainer on the
    released units' counts towards ``vocab_size`` (default 30,000; ``trained.py``); without
    counts, WordPiece and WordLevel hold every released item. When the tokenizer's size differs
    from a ``vocab_size``, ``export`` returns a note saying so (``size_note``)."""

    name = "dp_vocab.hf_tokenizer.v1"

    def __init__(self, model: str | None = None, style: str | None = None,
                 special_tokens: list[str] | None = None, vocab_size: int | None = None,
                 classic_files: bool = False, model_max_length: int | None = None,
                 max_training_words: int = 20_000_000, public_prior: str | None = None,
                 like: str | None = None):
        self.like = None
        if like is not None:   # the source's pipeline, special tokens and model type
            given = [k for k, v in (("model", model), ("style", style),
                                    ("special_tokens", special_tokens)) if v is not None]
            if given:
                raise ParameterError(
                    "export.like", like, "no export.model, export.style or "
                    "export.special_tokens beside it (the tokenizer named by like sets them)",
                    f"Remove {' and '.join(f'export.{k}' for k in given)} (on the command "
                    f"line: {' '.join(f'--export.{k} null' for k in given)}).")
            self.like = LikeSource(like)
            model = self.like.model
            vocab_size = self.like.size if vocab_size is None else vocab_size
        if model is not None and (not isinstance(model, str) or model not in MODELS):
            raise ParameterError("export.model", model, "one of " + ", ".join(MODELS))
        if style is not None and (not isinstance(style, str) or style not in STYLES):
            raise ParameterError("export.style", style, "one of " + ", ".join(STYLES))
        if model is None:
            model = STYLES[style].models[0] if style else "wordpiece"
        style = style or DEFAULT_STYLE[model]
        if model not in STYLES[style].models:
            raise ParameterError("export.style", style, f"a style for model {model!r}: "
                                 + ", ".join(s for s, st in STYLES.items() if model in st.models))
        self.model, self.style = model, STYLES[style]
        extra = [] if special_tokens is None else special_tokens
        if not isinstance(extra, (list, tuple)) or not all(
                isinstance(t, str) and t.strip() and not LINE_BREAK.search(t)
                and not LONE_SURROGATE.search(t) for t in extra):
            raise ParameterError("export.special_tokens", special_tokens,
                                 "a list of extra special tokens (non-blank strings without "
                                 "line breaks)",
                                 f"The {style} style already declares "
                                 + " ".join(self.style.special_tokens) + ".")
        self.special_tokens = list(dict.fromkeys(
            (self.like.special_tokens if self.like else self.style.special_tokens) + list(extra)))
        self.extra_special_tokens = [t for t in self.special_tokens
                                     if t not in self.style.special_tokens]
        # 256 tokens every tokenizer of this kind holds: byte-level BPE's alphabet, the byte
        # pieces of a Unigram with byte fallback (every trained Unigram here has them)
        byte_tokens = (self.like.byte_level or self.like.byte_fallback) if self.like \
            else self.style.pieces == "byte_level" or model == "unigram"
        if vocab_size is None and model in ("bpe", "unigram"):
            vocab_size = DEFAULT_VOCAB_SIZE
        # the size asked for; None: every released item (WordPiece, WordLevel, Unigram)
        self.vocab_size = None if vocab_size is None else _check_vocab_size(
            vocab_size, len(self.special_tokens), byte_tokens)
        self.classic_files = _check_bool("export.classic_files", classic_files)
        self._given_max_length = None if model_max_length is None else _check_int(
            "export.model_max_length", model_max_length, 1)
        self.model_max_length = _check_int("export.model_max_length",
                                           self.style.model_max_length if model_max_length is None
                                           else model_max_length, 1)
        self.max_training_words = _check_int("export.max_training_words", max_training_words, 1)
        self.public_prior = None if public_prior is None else PublicPrior(public_prior)

    @property
    def needs_counts(self) -> bool:
        return self.model in ("bpe", "unigram") or self.like is not None

    @property
    def unk(self) -> str | None:
        return None if self.style.name == "gpt2" else self.style.roles["unk_token"]

    # ---- the model ------------------------------------------------------------------------

    def build(self, release: Release, items: dict):
        from tokenizers import Tokenizer, decoders, models, processors

        if self.like is not None:
            return self._build_like(release)

        special = set(self.special_tokens)
        words = [w for w in release.items if w not in special]
        if self.style.pieces == "items":
            words = [w for w in dict.fromkeys(_surface(w, items) for w in words)
                     if w and w not in special]
        if self.model == "wordlevel":
            vocab = {t: i for i, t in enumerate(self.special_tokens + words)}
            tok = Tokenizer(models.WordLevel(vocab, unk_token=self.unk))
        elif release.counts is not None:
            tok = Tokenizer(self._trained_model(release, words, items))
        elif self.model == "wordpiece":
            tok = Tokenizer(models.WordPiece(self._wordpiece_vocab(words, items), unk_token=self.unk,
                                             max_input_chars_per_word=100))
        tok.normalizer = _normalizer(items, self.style.pieces == "metaspace")
        tok.pre_tokenizer = self._pre_tokenizer(items)
        if self.style.pieces == "items":
            tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
        elif self.style.pieces == "metaspace":
            tok.decoder = decoders.Sequence([  # ▁ → space, bytes → characters, one string
                decoders.Replace(METASPACE, " "), decoders.ByteFallback(), decoders.Fuse(),
                decoders.Strip(" ", 1, 0)])
        else:
            tok.decoder = decoders.ByteLevel()
        # special tokens are already in the vocabulary: this marks them atomic and special
        tok.add_special_tokens(self.special_tokens)
        if self.style.single:
            ids = {t: tok.token_to_id(t) for t in self.style.special_tokens}
            tok.post_processor = processors.TemplateProcessing(
                single=self.style.single, pair=self.style.pair,
                special_tokens=[(t, ids[t]) for t in self.style.special_tokens
                                if t in self.style.single])
        else:
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
        return tok

    def _wordpiece_vocab(self, words: list[str], items: dict) -> dict[str, int]:
        pieces = self.special_tokens + words
        have = set(pieces)
        for ch in _alphabet(words, items):
            for p in (ch, "##" + ch):
                if p not in have:
                    pieces.append(p)
                    have.add(p)
        return {t: i for i, t in enumerate(pieces)}

    def _build_like(self, release: Release):
        """The source tokenizer with its model trained on the released units' DP counts (the
        items were extracted with its own pipeline: ``dp_vocab.hf_tokenizer_pipeline.v1``)."""
        like = cast(LikeSource, self.like)
        counts, floor = release.counts or {}, count_floor(release)
        special = set(self.special_tokens)
        units: dict[str, float] = {w: max(float(counts.get(w, 0)), floor, 0.0)
                                   for w in release.items if w not in special}
        released = units
        if self.public_prior is not None:
            units = self.public_prior.fill(units, like.units_of, self._new_characters(),
                                           self._text_of,
                                           every_script_word=like.model == "wordpiece")
        units = with_punctuated_forms(units, released, like.units_of)
        return like.retrained(training_counts(units, self.max_training_words),
                              self.vocab_size or like.size)

    def _text_of(self, item: str) -> str:
        """A released item's text (byte-level items are written in GPT-2's byte map)."""
        byte_level = self.like.byte_level if self.like else self.style.pieces == "byte_level"
        return _byte_level_text(item) if byte_level else item

    def _new_characters(self) -> int:
        """At most how many characters the public prior may add to the alphabet: 1/8 of the
        size (WordPiece holds a character twice), so they never crowd out what was released."""
        return (self.vocab_size or DEFAULT_VOCAB_SIZE) // 8

    def _pre_tokenizer(self, items: dict):
        """The exported pre-tokenizer: what splits text into the units a model is trained on."""
        from tokenizers import pre_tokenizers
        if self.style.pieces == "items":
            return _items_pre_tokenizer(items)
        if self.style.pieces == "metaspace":
            return pre_tokenizers.Metaspace(METASPACE, prepend_scheme="always")
        return pre_tokenizers.ByteLevel(add_prefix_space=False)

    def training_units(self, release: Release, words: list[str], items: dict) -> dict[str, float]:
        """Each released item's DP count on the units the exported pre-tokenizer makes of it:
        the item itself when the extraction used that pre-tokenizer (the recommended recipes
        do; the ``_parts`` kinds' items are units and parts of them), else the units
        of the item's text after a space (a word's usual place); each unit at least at
        ``count_floor``, and for Unigram a ``_parts`` item of one character outside ASCII at
        it."""
        counts = release.counts or {}
        floor = count_floor(release)

        def count(w: str) -> float:
            return float(max(counts.get(w, 0), 0))
        if self.style.pieces == "items":   # words are surfaces: their items' counts add up
            by_surface: dict[str, float] = {}
            for w in release.items:
                s = _surface(w, items)
                by_surface[s] = by_surface.get(s, 0.0) + count(w)
            return {w: max(by_surface.get(w, 0.0), floor) for w in words}
        own = (items.get("tokenizer") == "hf_pre_tokenizer"
               and items.get("kind") in {"byte_level": BYTE_LEVEL_KINDS,
                                         "metaspace": ("metaspace", "metaspace_parts"),
                                         }.get(self.style.pieces, ()))
        if own:
            # a character alone (``wide_characters``) counts the users who write it anywhere,
            # not the times it stands alone: a Unigram piece's score is its share of the table,
            # so at that count it would outscore the words holding it
            alone = self.model == "unigram" and items["kind"].endswith("_parts")
            return {w: floor if alone and len(w) == 1 and not w.isascii()
                    else max(count(w), floor) for w in words}
        pre = self._pre_tokenizer(items)
        units: dict[str, float] = {}
        for w in words:
            s = _surface(w, items)
            for unit, _ in pre.pre_tokenize_str(" " + s if s[:1].isalnum() else s):
                units[unit] = units.get(unit, 0.0) + count(w)
        return {u: max(c, floor) for u, c in units.items()}

    def _normalizer_and_pre_tokenizer(self, items: dict):
        """text → the exported pipeline's units (how a public word becomes a training unit)."""
        normalizer, pre = _normalizer(items, self.style.pieces == "metaspace"), self._pre_tokenizer(items)

        def units_of(text: str) -> list[str]:
            if normalizer is not None:
                text = normalizer.normalize_str(text)
            return [u for u, _ in pre.pre_tokenize_str(text)]
        return units_of

    def _alphabet_for_training(self, units, items: dict) -> list[str]:
        from tokenizers import pre_tokenizers
        if self.style.pieces == "byte_level":
            return pre_tokenizers.ByteLevel.alphabet()
        alphabet = _alphabet(units, items)
        return [METASPACE] + alphabet if self.style.pieces == "metaspace" else alphabet

    def _alone(self, chars, items: dict) -> frozenset[str]:
        """The characters the exported pre-tokenizer always makes a word of their own (BERT:
        punctuation, CJK ideographs): a WordPiece continuing piece of one could never be used.
        Probed between letters, doubled and between ASCII punctuation, so a pre-tokenizer that
        joins runs of symbols or keeps a character inside words (apostrophes) keeps its piece."""
        pre = self._pre_tokenizer(items)

        def alone(ch: str) -> bool:
            return all([u for u, _ in pre.pre_tokenize_str(text)] == want
                       for text, want in ((f"a{ch}a", ["a", ch, "a"]),
                                          (f"a{ch}{ch}a", ["a", ch, ch, "a"]),
                                          (f".{ch}.", [".", ch, "."])))
        return frozenset(ch for ch in chars if alone(ch))

    def _trained_model(self, release: Release, words: list[str], items: dict):
        """The model learned by ``tokenizers``' BPE trainer on the released units' DP counts
        (``trained.py``); Unigram keeps room for its 256 byte-fallback pieces."""
        from tokenizers import models
        weights = released = self.training_units(release, words, items)
        if self.public_prior is not None:
            weights = self.public_prior.fill(
                weights, self._normalizer_and_pre_tokenizer(items), self._new_characters(),
                self._text_of,
                every_script_word=self.model == "wordpiece")
        weights = with_punctuated_forms(weights, released,
                                        self._normalizer_and_pre_tokenizer(items))
        units = training_counts(weights, self.max_training_words)
        alphabet = self._alphabet_for_training(units, items)
        size = self.vocab_size or DEFAULT_VOCAB_SIZE
        if self.model == "unigram":
            size -= len(BYTE_PIECES)
        alone: frozenset[str] = frozenset()
        if self.model == "wordpiece":
            alphabet = sorted(set(alphabet) | set(PUBLIC_PUNCTUATION))
            alone = self._alone(alphabet, items)
        trained = train_model(self.model, units, size, self.special_tokens, alphabet, self.unk,
                              alone=alone)
        if self.model == "bpe":
            return models.BPE(trained["vocab"], bpe_merges(trained))
        if self.model == "wordpiece":
            return models.WordPiece(trained["vocab"], unk_token=self.unk,
                                    max_input_chars_per_word=100)
        pieces = [(p, score) for p, score in with_byte_pieces(trained["vocab"])]
        unk = self.unk
        unk_id = None if unk is None else [p for p, _ in pieces].index(unk)
        return models.Unigram(pieces, unk_id=unk_id, byte_fallback=True)

    # ---- files ------------------------------------------------------------------------------

    def tokenizer_config(self, tok) -> dict:
        """``tokenizer_config.json`` for ``transformers`` (PreTrainedTokenizerFast)."""
        added = {str(tok.token_to_id(t)): {"content": t, "lstrip": False, "rstrip": False,
                                           "normalized": False, "single_word": False,
                                           "special": True}
                 for t in self.special_tokens}
        names = ["input_ids", "attention_mask"]
        if self.style.name == "bert":
            names.insert(1, "token_type_ids")
        return {"tokenizer_class": "PreTrainedTokenizerFast",
                **self.style.roles,
                "additional_special_tokens": self.extra_special_tokens,
                "added_tokens_decoder": added,
                "model_max_length": self.model_max_length,
                "padding_side": "right", "truncation_side": "right",
                "clean_up_tokenization_spaces": False,
                "model_input_names": names}

    def special_tokens_map(self) -> dict:
        return {**self.style.roles, "additional_special_tokens": self.extra_special_tokens}

    def export(self, release: Release, outdir: Path, context: dict | None = None) -> Exported:
        items = (context or {}).get("items", DEFAULT_ITEMS)
        if self.needs_counts and release.counts is None:
            raise ParameterError("export.model", self.model, "a release with DP counts",
                                 "Add a [counts] section or set mechanism.noisy_counts = true.")
        check_items_writable(release.items)
        tok = self.build(release, items)
        out = Path(outdir) / "hf"
        out.mkdir(exist_ok=True)
        text = tok.to_str(pretty=True)
        # written from Python: tokenizers' own writer raises a bare Exception on a full disk
        (out / "tokenizer.json").write_text(text, encoding="utf-8")
        if self.like is not None:
            _write_json(out / "tokenizer_config.json",
                        self.like.tokenizer_config(tok, self._given_max_length))
            _write_json(out / "special_tokens_map.json", self.like.roles)
        else:
            _write_json(out / "tokenizer_config.json", self.tokenizer_config(tok))
            _write_json(out / "special_tokens_map.json", self.special_tokens_map())
        written = ["hf/tokenizer.json", "hf/tokenizer_config.json", "hf/special_tokens_map.json"]
        if self.classic_files:
            written += [f"hf/{Path(f).name}" for f in _saved_model_files(tok, out)]
        record = (context or {}).get("record")
        if record is not None:   # a model card needs the run's privacy record
            prior = [] if self.public_prior is None or release.counts is None \
                else self.public_prior.describe(
                    script_languages(map(self._text_of, release.items)))
            if self.like is not None:
                prior.append({**self.like.describe(),
                              "source": f"{Path(self.like.path).name} (pipeline, special "
                                        f"tokens and model type)"})
            card = model_card(record, self.model,
                              "like " + Path(self.like.path).name if self.like
                              else self.style.name + " style", tok.get_vocab_size(),
                              written + ["hf/README.md"], prior)
            (out / "README.md").write_text(card, encoding="utf-8")
            written.append("hf/README.md")
        notes = [None if self.vocab_size is None else self.size_note(json.loads(text), release),
                 self.prior_note(tok.get_vocab_size(), release),
                 self.like.roles_note if self.like is not None else None]
        return Exported(written, [n for n in notes if n])

    def prior_note(self, size: int, release: Release) -> str | None:
        """When the released items are under a tenth of the tokenizer's size, most of it comes
        from the public prior: say so. Post-processing (the release's size and parameters)."""
        if self.public_prior is None or release.counts is None:
            return None
        n_items = self._released_count(release)
        if 10 * n_items >= size:
            return None
        return (f"hf/tokenizer.json's {size:,} tokens rest mostly on the public prior "
                f"({self.public_prior.source}): only {n_items:,} items were released, so its "
                f"pieces follow public text more than yours. For a tokenizer shaped by your "
                f"corpus, raise [budget] epsilon, use a corpus with more users, or ask for fewer "
                f"tokens (export.vocab_size).")

    def _released_count(self, release: Release) -> int:
        """The released items that are not special tokens."""
        specials = set(self.special_tokens)
        return sum(1 for w in release.items if w not in specials)

    def size_note(self, tokenizer_json: dict, release: Release) -> str | None:
        """When the tokenizer's size differs from the one asked for: what was asked, what was
        made, why and what to do. Post-processing only: the sizes are functions of the released
        items and their DP counts."""
        requested = self.vocab_size
        size = len(tokenizer_json["model"]["vocab"])
        if requested is None or size == requested:   # None: no size asked for
            return None
        n_items = self._released_count(release)
        head = (f"hf/tokenizer.json has {size:,} tokens, not the requested vocab_size = "
                f"{requested:,}")
        more = ("for more tokens, release more items: raise [budget] epsilon or use a corpus "
                "with more users")
        if size > requested and release.counts is not None and self.model != "wordlevel":
            # a trained tokenizer keeps its whole alphabet, whatever the size asked for
            fallback = self.like.byte_fallback if self.like else self.model == "unigram"
            kept = ["every character of its training table"
                    + (" (each also as a ##piece)" if self.model == "wordpiece" else ""),
                    *(["256 byte pieces"] if fallback else []),
                    f"{len(self.special_tokens)} special token(s)"]
            return (f"{head}: the tokenizer keeps {', '.join(kept[:-1])} and {kept[-1]}, "
                    f"whatever size is asked for. Ask for more than {size:,} "
                    f"(export.vocab_size) to leave places for learned pieces.")
        if self.model == "bpe":   # the trainer stops when no pair is left to merge
            merges = len(tokenizer_json["model"]["merges"])
            return (f"{head}: the {n_items:,} released items allow only {merges:,} BPE merges "
                    f"(+ 256 bytes and {len(self.special_tokens)} special token(s)). To ask for "
                    f"what the release supports, set export.vocab_size = {size} "
                    f"(--export.vocab_size {size}); {more}.")
        if release.counts is not None and self.model != "wordlevel":
            # the trainer stops when the released units' counts support no more merges/pieces
            return (f"{head}: {self.model}'s trainer found no more tokens in the DP counts of "
                    f"the {n_items:,} released items. To ask for what the release supports, "
                    f"set export.vocab_size = {size} (--export.vocab_size {size}); {more}.")
        holds = {"wordlevel": "the special tokens and every released item",
                 "wordpiece": "the special tokens, every released item and their characters "
                              "(also as ##pieces)"}[self.model]
        fewer = ("for fewer tokens, release fewer items: the top_k mechanism releases k "
                 "(dp_vocab.top_k.v1)")
        return (f"{head}: without DP counts, a {self.model} vocabulary holds {holds}, here from "
                f"{n_items:,} released items. Add a [counts] section to train it towards "
                f"vocab_size, remove export.vocab_size, or "
                f"{more if size < requested else fewer}.")


def _saved_model_files(tok, out: Path) -> list[str]:
    """``tok.model.save(out)``, its I/O failures raised as the ``OSError`` they are (tokenizers
    raises a bare ``Exception`` "... (os error N)"), so the run reports them like any write."""
    try:
        return tok.model.save(str(out))
    except Exception as e:  # noqa: BLE001 - only an OS error is translated; the rest re-raised
        found = re.search(r"\(os error (\d+)\)", str(e))
        if found is None:
            raise
        code = int(found.group(1))
        raise OSError(code, os.strerror(code)) from None


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _byte_level_text(unit: str) -> str:
    """A byte-level unit's text (GPT-2's bytes-to-characters map undone)."""
    from tokenizers import decoders
    return decoders.ByteLevel().decode([unit])
