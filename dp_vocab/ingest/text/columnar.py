"""The regex extractor on columns: a batch of documents → (document, item) rows, in polars.

The same steps as :class:`~dp_vocab.ingest.text.items.ItemExtractor` on a whole batch at once, on every
core: Unicode NFKC, lower-casing, the tokenizer's regular expression (Rust ``regex``), line-break
splitting, dropping over-long tokens (and, where tokens are joined, tokens holding a joiner
character), n-grams inside runs. Rows come out in the order the Python extractor produces items,
so items are first seen (and interned) in the same order.

The pattern is translated so that it means what Python's ``re`` means: Rust's ``\\w`` is
Alphabetic + marks + connector punctuation and its ``\\s`` lacks U+001C..U+001F, where Python's
``\\w`` is ``str.isalnum()`` or ``_`` and its ``\\s`` is ``str.isspace()``. The translation
(:func:`rust_pattern`) writes ``\\w`` as ``[\\p{L}\\p{N}_]`` and ``\\s`` as
``[\\s\\x1C-\\x1F]``; ``\\d`` is the decimal digits in both. What remains different is the
Unicode version: Python 3.11's ``unicodedata`` is Unicode 14.0, polars' regex, NFKC and case
tables are newer, so characters assigned after Unicode 14.0 (and nothing else: see
``tests/test_columnar.py``, which checks every code point) may tokenize or normalise
differently. A pattern that cannot be translated faithfully (word boundaries, look-around,
back-references, ``$``, inline flags, nested or POSIX classes, set operations, patterns that
match the empty string) is not run here: :func:`columnar_extractor` returns None and the run
uses the Python extractor, which is exact by definition.
"""

from __future__ import annotations

import re
import warnings

import polars as pl

from .items import ItemExtractor
from .tokenizers import RegexTokenizer

WORD = r"\p{L}\p{N}_"          # Python's \w: str.isalnum() or "_"
SPACE = r"\s\x1C-\x1F"         # Python's \s: str.isspace()
_LINE_BREAKS = r"\n\r\x0B\x0C\x1C\x1D\x1E\x{85}\x{2028}\x{2029}"   # str.splitlines()

# escapes whose meaning differs between the engines and has no faithful translation here
_UNSUPPORTED_ESCAPES = set("bBAZzNgGpPQE0123456789")


def rust_pattern(pattern: str) -> str | None:
    """``pattern`` (Python ``re``) rewritten for Rust ``regex`` with the same classes, or None
    when it uses a construct this translation does not cover."""
    with warnings.catch_warnings():   # "possible nested set": the translation refuses those
        warnings.simplefilter("ignore", FutureWarning)
        matches_empty = re.compile(pattern).fullmatch("") is not None
    if matches_empty:
        return None   # empty matches: the engines step over them differently
    out: list[str] = []
    in_class = False
    class_start = 0
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                return None
            esc = pattern[i + 1]
            if esc in _UNSUPPORTED_ESCAPES:
                return None
            if esc == "w":
                out.append(WORD if in_class else f"[{WORD}]")
            elif esc == "W":
                out.append(f"[^{WORD}]")
            elif esc == "s":
                out.append(SPACE if in_class else f"[{SPACE}]")
            elif esc == "S":
                out.append(f"[^{SPACE}]")
            elif esc == "d":
                out.append(r"\d")     # Unicode decimal digits (Nd) in both
            elif esc == "D":
                out.append(r"\D")
            elif esc.isalnum() and esc not in "tnrfvxu":
                return None           # other letter escapes: not checked to agree
            elif esc in "xu":
                return None           # \x41 / \u00e9 spellings differ; write the character
            else:
                out.append("\\" + esc)
            i += 2
            continue
        if in_class:
            if ch == "[" or pattern.startswith(("&&", "--", "~~"), i):
                return None           # Rust: nested class or set operation; Python: literal
            if ch == "]" and i > class_start:
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            class_start = i + 1
            if pattern.startswith("^", i + 1):
                class_start += 1
            out.append(pattern[i:class_start])
            i = class_start
            if i < n and pattern[i] == "]":   # "[]..." / "[^]...": a literal "]" in Python
                out.append(r"\]")
                i += 1
            continue
        if ch == "$":
            return None               # Python's $ also matches before a final newline
        if ch == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            return None               # flags, look-around, named groups
        if ch == "{" and not re.match(r"\{\d*(,\d*)?\}", pattern[i:]):
            out.append(r"\{")         # a literal brace in Python
            i += 1
            continue
        out.append(ch)
        i += 1
    translated = "".join(out)
    try:
        pl.Series([""]).str.contains(translated)
    except pl.exceptions.PolarsError:
        return None
    return translated


class ColumnarExtractor:
    """An :class:`ItemExtractor` with a regex tokenizer, applied to a batch of texts."""

    def __init__(self, extractor: ItemExtractor, pattern: str):
        self.extractor = extractor
        self.pattern = pattern
        self.joined = extractor.n_max > 1   # tokens holding a joiner character break runs
        self.no_line_breaks = extractor.no_line_breaks

    def tokens(self, texts: pl.Series) -> pl.DataFrame:
        """(doc, tok) rows: the normalised tokens of each document (doc = row in the batch)."""
        ex = self.extractor
        s = texts
        if ex.nfkc:   # only non-ASCII texts can change (the Python extractor skips the rest)
            changing = s.str.contains(r"[^\x00-\x7F]").arg_true()
            if changing.len():
                s = s.scatter(changing, s.gather(changing).str.normalize("NFKC"))
        tok = pl.col("tok").str.to_lowercase() if ex.lowercase else pl.col("tok")
        # the streaming engine splits the batch over every core, in order
        df = pl.DataFrame({"tok": s}).lazy().with_row_index("doc") \
            .select("doc", tok.str.extract_all(self.pattern)).explode("tok") \
            .drop_nulls("tok").collect(engine="streaming")
        if not self.no_line_breaks and df["tok"].str.contains(f"[{_LINE_BREAKS}]").any():
            # a token holding a line break is split there, as at whitespace
            df = df.with_columns(pl.col("tok").str.extract_all(f"[^{_LINE_BREAKS}]+")) \
                .explode("tok").drop_nulls("tok")
        return df

    def runs(self, texts: pl.Series) -> pl.DataFrame:
        """(doc, seg, tok) rows: tokens in runs (seg: a run's number, increasing), with the
        tokens that break runs dropped — as ``ItemExtractor.runs``."""
        ex = self.extractor
        df = self.tokens(texts)
        brk = pl.col("tok").str.len_chars() > ex.max_length
        for ch in ex.joiner_chars:   # runs are joined (n-grams, DPNE's levels)
            brk = brk | pl.col("tok").str.contains(ch, literal=True)
        df = df.with_columns(brk.alias("brk"))
        new_doc = pl.col("doc") != pl.col("doc").shift(1, fill_value=-1)
        start = new_doc | pl.col("brk") | pl.col("brk").shift(1, fill_value=False)
        return df.with_columns(start.cum_sum().alias("seg")).filter(~pl.col("brk")) \
            .select("doc", "seg", "tok")

    def items(self, texts: pl.Series) -> pl.DataFrame:
        """(doc, item) rows in the order ``ItemExtractor.__call__`` gives them, document by
        document."""
        ex = self.extractor
        if not self.joined and ex.n_min == 1:
            return self.tokens(texts).filter(pl.col("tok").str.len_chars() <= ex.max_length) \
                .rename({"tok": "item"})
        runs = self.runs(texts).with_row_index("pos")
        levels = []
        for n in range(ex.n_min, ex.n_max + 1):
            if n == 1:
                level = runs.select("doc", "seg", "pos", pl.col("tok").alias("item"))
            else:
                same = pl.col("seg").shift(-(n - 1)) == pl.col("seg")
                gram = pl.concat_str([pl.col("tok").shift(-k) for k in range(n)],
                                     separator=ex.joiner)
                level = runs.with_columns(gram.alias("item"), same.fill_null(False).alias("ok")) \
                    .filter(pl.col("ok")).select("doc", "seg", "pos", "item")
            levels.append(level.with_columns(pl.lit(n, dtype=pl.Int32).alias("n")))
        # Python's order: run by run, n-grams by n, then by position
        return pl.concat(levels).sort(["seg", "n", "pos"]).select("doc", "item")


def columnar_extractor(extractor) -> ColumnarExtractor | None:
    """The columnar form of ``extractor``, or None when only the Python path can run it (a
    spaCy / Hugging Face tokenizer, a pattern without a faithful translation)."""
    if type(extractor) is not ItemExtractor or type(extractor.tokenizer) is not RegexTokenizer:
        return None
    pattern = rust_pattern(extractor.tokenizer.pattern)
    return None if pattern is None else ColumnarExtractor(extractor, pattern)
