"""Items of one document: normalise, tokenize, drop over-long tokens, form n-grams."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Callable

from ..errors import ParameterError
from ..privacy.params import check_positive_int


class ItemExtractor:
    """``extractor(text) -> list[str]``: the n-grams (n_min ≤ n ≤ n_max) of one document.

    Normalisation: Unicode NFKC, then lower-casing (both optional). A token longer than
    ``max_length`` characters is dropped and splits the token stream, so no n-gram spans it.
    N-grams never cross document boundaries; their tokens are joined by ``joiner``.
    """

    def __init__(self, tokenizer: Callable[[str], list[str]], n_min: int = 1, n_max: int = 1,
                 lowercase: bool = True, nfkc: bool = True, max_length: int = 50,
                 joiner: str = " ", max_distinct_per_user: int = 100_000):
        self.tokenizer = tokenizer
        self.n_min = check_positive_int(n_min, "n_min")
        self.n_max = check_positive_int(n_max, "n_max")
        if self.n_max < self.n_min:
            raise ParameterError("n_max", n_max, f"an integer >= n_min ({self.n_min})")
        self.lowercase = bool(lowercase)
        self.nfkc = bool(nfkc)
        self.max_length = check_positive_int(max_length, "max_length")
        if not isinstance(joiner, str) or not joiner:
            raise ParameterError("joiner", joiner, "a non-empty string")
        self.joiner = joiner
        # memory bound for hostile users; far above any Δ0 (kept: smallest item hashes)
        self.max_distinct_per_user = check_positive_int(max_distinct_per_user,
                                                        "max_distinct_per_user")

    def normalize(self, text: str) -> str:
        if self.nfkc and not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        return text.lower() if self.lowercase else text

    def runs(self, text: str) -> list[list[str]]:
        """Normalised tokens of one document, split where an over-long token was dropped."""
        tokens = self.tokenizer(self.normalize(text))
        m = self.max_length
        if not any(len(t) > m for t in tokens):
            return [tokens] if tokens else []
        runs, run = [], []
        for t in tokens:
            if len(t) > m:
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
            tokens = self.tokenizer(self.normalize(text))
            m = self.max_length
            if any(len(t) > m for t in tokens):
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

    def describe(self) -> dict:
        desc = getattr(self.tokenizer, "describe", None)
        return {**(desc() if desc else {"tokenizer": repr(self.tokenizer)}),
                "n_min": self.n_min, "n_max": self.n_max, "lowercase": self.lowercase,
                "nfkc": self.nfkc, "max_length": self.max_length, "joiner": self.joiner,
                "max_distinct_per_user": self.max_distinct_per_user}
