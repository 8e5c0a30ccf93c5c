"""Items of one document: normalise, tokenize, drop over-long tokens, form n-grams."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Callable

from ...errors import ParameterError
from ...privacy.params import check_bool, check_positive_int
from .tokenizers import DEFAULT_PATTERN, RegexTokenizer

# Every character str.splitlines() breaks on: whitespace here, so no item holds one and
# one-item-per-line files (vocab.txt, merges.txt) stay aligned with item ids.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A lone surrogate (JSON "\\ud800") cannot be written as UTF-8.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.lru_cache(maxsize=1)
def text_code_digest() -> str:
    """SHA-256 of dp-vocab's version and the source of every module of this package."""
    from ...version import __version__
    h = hashlib.sha256(__version__.encode())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


class ItemExtractor:
    """``extractor(text) -> list[str]``: the n-grams (n_min ≤ n ≤ n_max) of one document.

    Normalisation: lone surrogates become U+FFFD, then Unicode NFKC, then lower-casing (both
    optional). A token the tokenizer returns with a line break inside (any character
    ``str.splitlines()`` splits on) is split there, as at whitespace. A token longer than
    ``max_length`` characters is dropped and splits the token stream, so no n-gram spans it.
    N-grams never cross document boundaries; their tokens are joined by ``joiner``. Wherever
    tokens are joined (n_max > 1, and the token runs of level-wise n-gram mechanisms), a token
    that contains a character of the joiner is dropped the same way, so that a joined string
    has exactly one reading ("a_b" + "c" and "a" + "b_c" would both give "a_b_c" with joiner
    "_").
    """

    def __init__(self, tokenizer: Callable[[str], list[str]], n_min: int = 1, n_max: int = 1,
                 lowercase: bool = True, nfkc: bool = True, max_length: int = 50,
                 joiner: str = " ", max_distinct_per_user: int = 100_000):
        self.tokenizer = tokenizer
        self.n_min = check_positive_int(n_min, "n_min", maximum=64)
        self.n_max = check_positive_int(n_max, "n_max", maximum=64)
        if self.n_max < self.n_min:
            raise ParameterError("n_max", n_max, f"an integer >= n_min ({self.n_min})")
        kind = getattr(tokenizer, "kind", None)
        if self.n_max > 1 and isinstance(kind, str) and kind.endswith("_parts"):
            raise ParameterError("n_max", n_max, f"1 with kind = \"{kind}\"",
                                 "Its parts follow the units they come from, so they are not "
                                 "consecutive words: use kind = \"" + kind[:-len("_parts")]
                                 + "\" for n-grams.")
        self.lowercase = check_bool(lowercase, "lowercase")
        self.nfkc = check_bool(nfkc, "nfkc")
        self.max_length = check_positive_int(max_length, "max_length", maximum=1_000_000)
        if (not isinstance(joiner, str) or not joiner or _LINE_BREAK.search(joiner)
                or _LONE_SURROGATE.search(joiner)):
            raise ParameterError("joiner", joiner, "a non-empty string without line breaks")
        self.joiner = joiner
        self.joiner_chars = tuple(dict.fromkeys(joiner))
        # the default pattern never matches whitespace, so never a line break: skip the check
        self.no_line_breaks = type(tokenizer) is RegexTokenizer and \
            tokenizer.pattern == DEFAULT_PATTERN
        # memory bound for hostile users; far above any Δ0 (kept: smallest item hashes)
        self.max_distinct_per_user = check_positive_int(
            max_distinct_per_user, "max_distinct_per_user", maximum=100_000_000)

    def normalize(self, text: str) -> str:
        if not text.isascii():
            text = _LONE_SURROGATE.sub("\ufffd", text)
            if self.nfkc:
                text = unicodedata.normalize("NFKC", text)
        return text.lower() if self.lowercase else text

    def tokens(self, text: str) -> list[str]:
        """The tokenizer's tokens of the normalised text, none holding a line break."""
        tokens = self.tokenizer(self.normalize(text))
        # rare: the built-in tokenizers never keep a line break
        if not self.no_line_breaks and _LINE_BREAK.search("".join(tokens)):
            tokens = [p for t in tokens for p in _LINE_BREAK.split(t) if p]
        return tokens

    def _breaks(self, token: str) -> bool:
        # any character of the joiner, not the joiner alone: with "::", "a:" + "b" and
        # "a" + ":b" would both join to "a:::b"
        return len(token) > self.max_length or any(ch in token for ch in self.joiner_chars)

    def runs(self, text: str) -> list[list[str]]:
        """Normalised tokens of one document, split where an over-long token or a token
        holding the joiner was dropped."""
        tokens = self.tokens(text)
        breaks = self._breaks
        if not any(breaks(t) for t in tokens):
            return [tokens] if tokens else []
        runs: list[list[str]] = []
        run: list[str] = []
        for t in tokens:
            if breaks(t):
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(t)
        if run:
            runs.append(run)
        return runs

    def __call__(self, text: str) -> list[str]:
        if self.n_min == 1 and self.n_max == 1:
            tokens = self.tokens(text)
            m = self.max_length
            if tokens and max(map(len, tokens)) > m:
                return [t for t in tokens if len(t) <= m]
            return tokens
        join = self.joiner.join
        out = []
        for run in self.runs(text):
            for n in range(self.n_min, self.n_max + 1):
                if n == 1:
                    out.extend(run)
                else:
                    out.extend(join(run[i:i + n]) for i in range(len(run) - n + 1))
        return out

    def iter_items(self, text: str) -> Iterable[str]:
        """The items of ``__call__``; n-grams are produced lazily, so a huge document's n-grams
        are never all in memory at once (its tokens are: bounded by the reader's line cap)."""
        if self.n_min == 1 and self.n_max == 1:
            return self(text)
        return self._ngrams(text)

    def _ngrams(self, text: str) -> Iterator[str]:
        join = self.joiner.join
        for run in self.runs(text):
            for n in range(self.n_min, self.n_max + 1):
                if n == 1:
                    yield from run
                else:
                    for i in range(len(run) - n + 1):
                        yield join(run[i:i + n])

    def code_digest(self) -> str:
        """A digest of the code behind what this extractor yields (dp-vocab's version and the
        text-processing modules): whatever is kept of its output, such as a normalised public
        list (mechanisms.public_list), is named by it, so new text code makes a new entry."""
        return text_code_digest()

    def describe(self) -> dict:
        desc = getattr(self.tokenizer, "describe", None)
        return {**(desc() if desc else {"tokenizer": repr(self.tokenizer)}),
                "n_min": self.n_min, "n_max": self.n_max, "lowercase": self.lowercase,
                "nfkc": self.nfkc, "max_length": self.max_length, "joiner": self.joiner,
                "max_distinct_per_user": self.max_distinct_per_user}
