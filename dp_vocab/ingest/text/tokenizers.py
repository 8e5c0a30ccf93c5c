"""Tokenizers behind one interface: ``tokenizer(text) -> list[str]`` plus ``describe()``.

The regex default is the fast path; spaCy and Hugging Face pre-tokenizers are options for
matching a downstream pipeline (their cost shows in the progress display).
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

from ...errors import ParameterError

# Words (Unicode letters/digits/underscore, with inner apostrophes: "doesn't") or one
# non-space symbol each.
DEFAULT_PATTERN = r"\w+(?:['’]\w+)*|[^\w\s]"


class RegexTokenizer:
    """Unicode-aware regex tokenizer: words and single punctuation marks."""

    def __init__(self, pattern: str = DEFAULT_PATTERN):
        if not isinstance(pattern, str):
            raise ParameterError("pattern", pattern, "a regular expression (a string)")
        try:
            self._findall = re.compile(pattern).findall
        except re.error as e:
            raise ParameterError("pattern", pattern, f"a valid regular expression ({e})") from None
        if re.compile(pattern).groups:
            raise ParameterError("pattern", pattern, "a regular expression without capturing "
                                 "groups", "Use (?:...) for grouping.")
        self.pattern = pattern

    def __call__(self, text: str) -> list[str]:
        return self._findall(text)

    def describe(self) -> dict:
        return {"tokenizer": "regex", "pattern": self.pattern}


class SpacyTokenizer:
    """The rule-based tokenizer of ``spacy.blank(lang)``; whitespace tokens are dropped."""

    def __init__(self, lang: str = "en"):
        import spacy
        if not isinstance(lang, str):
            raise ParameterError("lang", lang, "a spaCy language code such as 'en', 'de', 'xx'")
        try:
            self._tokenizer = spacy.blank(lang).tokenizer
        except (ImportError, KeyError, ValueError) as e:
            raise ParameterError("lang", lang, "a spaCy language code such as 'en', 'de', 'xx'",
                                 str(e).splitlines()[0]) from None
        self.lang = lang

    def __call__(self, text: str) -> list[str]:
        if _LONG_RUN.search(text):  # spaCy's affix search is quadratic in a run's length
            text = _LONG_RUN.sub(_cut_run, text)
        return [t.text for t in self._tokenizer(text) if not t.is_space]

    def describe(self) -> dict:
        return {"tokenizer": "spacy", "lang": self.lang, "max_run": MAX_RUN}


# A whitespace-free run longer than this is cut into pieces of this length before spaCy sees it:
# spaCy's time grows faster than linearly in a run's length, so one user's long run of emoji
# could stall a job; real words are far shorter (and tokens over max_length are dropped
# anyway), so only such runs tokenize differently.
MAX_RUN = 256
_LONG_RUN = re.compile(r"\S{%d,}" % (MAX_RUN + 1))


def _cut_run(m: re.Match) -> str:
    run = m.group(0)
    return " ".join(run[i:i + MAX_RUN] for i in range(0, len(run), MAX_RUN))


HF_PRE_TOKENIZERS = ("whitespace", "whitespace_split", "bert", "bert_parts", "byte_level",
                     "byte_level_parts", "metaspace", "metaspace_parts")
METASPACE = "\u2581"


@functools.lru_cache(maxsize=1)
def _part_pattern() -> re.Pattern:
    """A run of letters and digits (with their combining marks: ``"हिन्दी"`` is one run) with
    the marks before it, or the marks that end a unit; the underscore is a mark. Built once
    per process from the Unicode database (Python's ``\\w`` leaves combining marks out)."""
    ranges: list[list[int]] = []
    for c in range(sys.maxunicode + 1):
        if unicodedata.category(chr(c))[0] == "M":
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    combining = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    letter = rf"(?:[^\W_]|[{combining}])"
    mark = rf"(?:_|(?![{combining}])[^\w\u2581])"
    return re.compile(f"{mark}*{letter}+|{mark}+$")


def metaspace_parts(unit: str) -> list[str]:
    """The parts of a Metaspace unit: each run of letters and digits with the marks before it
    (the first also with the unit's "▁"), and the marks that end the unit. ``"▁(see"`` and
    ``"▁Müller"`` are one part; ``"▁end."`` gives ``"▁end"``, ``"."``; ``"▁https://x.org/a"``
    gives ``"▁https"``, ``"://x"``, ``".org"``, ``"/a"``. A unit of one part has no parts (it
    is its own)."""
    mark = METASPACE if unit.startswith(METASPACE) else ""
    body = unit[len(mark):]
    if body.isalnum() or METASPACE in body:   # one run; or not a Metaspace unit
        return []
    parts = _part_pattern().findall(body)
    if len(parts) <= 1:
        return []
    parts[0] = mark + parts[0]
    return parts


# Scripts written without spaces whose words are mostly one or two characters: CJK ideographs
# (unified, extension A, compatibility, and the supplementary ideographic plane), Hiragana,
# Katakana (with its phonetic extensions and half-width forms)
_UNSPACED_RUN = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u4dbf"
                           "\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]{2,}")


def unspaced_parts(text: str) -> list[str]:
    """In each run of two or more characters of a script written without spaces (Chinese,
    Japanese kana), every character and every pair of adjacent characters: most words of
    those scripts are one or two characters, and a pre-tokenizer that splits at spaces makes
    a whole clause one unit, which few users share."""
    if text.isascii():
        return []
    out: list[str] = []
    for m in _UNSPACED_RUN.finditer(text):
        run = m.group(0)
        out += run
        out += [run[i:i + 2] for i in range(len(run) - 1)]
    return out


_WIDE_CHARACTER = re.compile(r"[^\x00-\x7f\s]")   # \s: what str.isspace calls white space


def wide_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` outside ASCII, white space aside, in the order they
    first appear. Byte-level BPE writes each in two to four bytes and WordPiece reads one it
    lacks as the unknown token, but inside words no item holds one alone: as items of their
    own, the characters many users write are released even when no word holding them is."""
    if text.isascii():
        return []
    return list(dict.fromkeys(_WIDE_CHARACTER.findall(text)))


@functools.lru_cache(maxsize=1)
def _byte_level_map() -> dict[int, str]:
    """GPT-2's byte-to-character map (``tokenizers``' ByteLevel): printable Latin-1 bytes stand
    for themselves, the others for the characters from U+0100 on, in byte order."""
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    moved = [b for b in range(256) if b not in kept]
    return {**{b: chr(b) for b in kept}, **{b: chr(0x100 + i) for i, b in enumerate(moved)}}


def byte_level(text: str) -> str:
    """``text`` as a byte-level unit (its UTF-8 bytes, each as GPT-2's character for it)."""
    table = _byte_level_map()
    return "".join(table[b] for b in text.encode("utf-8"))


def sentencepiece_whitespace():
    """SentencePiece's whitespace handling, as a ``tokenizers`` normaliser: every run of white
    space (line breaks included) is one space, none at the ends. Metaspace turns spaces into
    "▁" and keeps other white space inside a unit, so without this a word after a line break
    would be another unit than the same word after a space."""
    from tokenizers import Regex, normalizers
    return normalizers.Sequence([normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip()])


# BERT's Chinese-character ranges (BasicTokenizer._is_chinese_char): each such character is a
# word of its own, as BERT's normaliser spaces them (handle_chinese_chars)
_CJK_IDEOGRAPHS = ("\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{20000}-\\x{2A6DF}\\x{2A700}-\\x{2B73F}"
                   "\\x{2B740}-\\x{2B81F}\\x{2B820}-\\x{2CEAF}\\x{F900}-\\x{FAFF}\\x{2F800}-\\x{2FA1F}")


def bert_pre_tokenizer():
    """BERT's pre-tokenization: each CJK ideograph a word of its own, then white space and
    punctuation (``BertPreTokenizer``). The extraction and the exported tokenizer share it."""
    from tokenizers import Regex, pre_tokenizers as pt
    return pt.Sequence([pt.Split(Regex(f"[{_CJK_IDEOGRAPHS}]"), behavior="isolated"),
                        pt.BertPreTokenizer()])


class HFPreTokenizer:
    """A Hugging Face ``tokenizers`` pre-tokenizer: Whitespace, BERT, ByteLevel, ... The
    metaspace kinds first handle white space as SentencePiece does
    (``sentencepiece_whitespace``), as the exported Metaspace tokenizers do.

    The ``_parts`` kinds also make items of the parts of units that few users share, so a
    trainer that sees the released parts learns pieces for them. ``metaspace_parts``: each
    Metaspace unit, then its ``metaspace_parts`` (Metaspace splits only at white space, so
    links, hyphenated words and markup are whole units, but the words and marks inside them,
    ``"://www"``, ``".com"``, ``"-based"``, are shared by many), then the text's
    ``wide_characters`` that are not items already. ``byte_level_parts``: GPT-2's
    byte-level units, then the text's ``unspaced_parts`` and its other ``wide_characters`` as
    byte-level units (GPT-2 splits off marks, but a Chinese clause or a Russian word is one
    unit, and without learned pieces each of its characters costs two to four byte tokens).
    ``bert_parts``: BERT's units, then the text's ``wide_characters`` that are not units
    already (a WordPiece vocabulary without ``ş`` reads every word holding it as unknown)."""

    def __init__(self, kind: str = "whitespace"):
        from tokenizers import pre_tokenizers as pt
        makers = {"whitespace": pt.Whitespace, "whitespace_split": pt.WhitespaceSplit,
                  "bert": bert_pre_tokenizer, "bert_parts": bert_pre_tokenizer,
                  "byte_level": lambda: pt.ByteLevel(add_prefix_space=False),
                  "byte_level_parts": lambda: pt.ByteLevel(add_prefix_space=False),
                  "metaspace": pt.Metaspace, "metaspace_parts": pt.Metaspace}
        if not isinstance(kind, str) or kind not in makers:
            raise ParameterError("kind", kind, "one of " + ", ".join(HF_PRE_TOKENIZERS))
        self._pre = makers[kind]()
        self._whitespace = sentencepiece_whitespace() if kind.startswith("metaspace") else None
        self._parts = kind.endswith("_parts")
        self.kind = kind

    def __call__(self, text: str) -> list[str]:
        if self._whitespace is not None:
            text = self._whitespace.normalize_str(text)
        units = [piece for piece, _ in self._pre.pre_tokenize_str(text)]
        if not self._parts:
            return units
        if self._whitespace is not None:
            units += [part for unit in units for part in metaspace_parts(unit)]
        if self._whitespace is not None or self.kind == "bert_parts":
            have = set(units)
            return units + [ch for ch in wide_characters(text) if ch not in have]
        parts = unspaced_parts(text)
        have = set(parts)
        parts += [ch for ch in wide_characters(text) if ch not in have]
        return units + [byte_level(part) for part in parts]

    def describe(self) -> dict:
        return {"tokenizer": "hf_pre_tokenizer", "kind": self.kind}
