"""GW and GW-KT (Carvalho, Wang, Gondara, AAAI 2022), shipped only in the repaired form GW-Δ0
(proof and why the published form is not DP: greedy.md, beside this module).

Why the published form is not DP: its greedy update gives weight 0 to most items a user holds.
The published code noises every held item, zero weights included, with no cap: a user with m
unique items is exposed with probability ≈ δ(1 + (m−1)e^{−ε}) (3.7e-3 for m = 1000 at ε = 1,
δ = 1e-5). Noising only positive weights instead lets X change which *other* users' items get
positive weight (a fixed-order counterexample makes 60 items not held by X newly releasable).

The repair: cap each user to the first Δ0 items of its priority order, make every capped item of
every user a release candidate (zero weights included), and raise ρ so that X's ≤ Δ0 unique
candidates (at most one with weight ≤ 1, the rest at 0) all stay below it except w.p. ≤ δ.
"""

from __future__ import annotations

import csv
import gzip
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


from ..errors import CorpusError, ParameterError
from ..privacy import calibrate
from ..privacy.params import check_nonnegative, check_real
from ..bounding import BoundedSets, Bounding, Priority
from ..compiled import lazy_module
from .base import Mechanism
from .claim import Noise, Norm, Sensitivity, Support

_kernels = lazy_module("dp_vocab.mechanisms._kernels")   # numba: imported on first use


@dataclass(frozen=True, kw_only=True, repr=False)
class GW(Mechanism):
    """GW-Δ0 (repaired greedy without sampling). Privacy claim (proof: greedy.md §2-3):

    - update: each user fills its capped items to Γ in a fixed priority order that depends only on
      its own data (own frequency, ties by the public item hash), spending budget 1. Water-filling
      in a fixed order is ℓ1-contractive and monotone: ‖H(D) − H(D')‖₁ ≤ 1, H(D) ≥ H(D');
      at most one of X's unique items gets positive weight, and it is ≤ 1;
    - candidates: every item in any user's capped set, zero weights included;
    - noise: Lap(1/ε);
    - threshold: the smallest ρ with 1 − (1 − ½e^{−ε(ρ−1)})(1 − ½e^{−ερ})^{Δ0−1} ≤ δ;
      cutoff Γ = ρ + α/ε (default α = 3);
    - guarantee: (ε, δ)-DP for every fixed user order.
    """

    name = "gw"
    summary = "repaired greedy without sampling: fill own most frequent items first"
    noise = Noise.LAPLACE
    support = Support.CAPPED
    sampling_modes = ("top",)

    sampling: str = field(default="top", init=False)
    alpha: float = 3.0
    cutoff: float = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("alpha", check_nonnegative(self.alpha, "alpha"))

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L1, 1.0, monotone=True, lone_items_positive=1, cap=self.cutoff,
                           text="L1 <= 1 and H(D) >= H(D'); at most one unique item of the "
                                "removed user has positive weight (<= 1)")

    def _calibrate(self):
        b, rho = calibrate.gw_repaired(self.epsilon, self.delta, self.max_items_per_user)
        self._set("noise_scale", b)
        self._set("threshold", rho)
        self._set("cutoff", rho + self.alpha * b)

    def params(self):
        return {"epsilon": self.epsilon, "delta": self.delta,
                "max_items_per_user": self.max_items_per_user, "alpha": self.alpha}

    def privacy(self):
        return {**super().privacy(), "cutoff": self.cutoff,
                "candidates": "every item in a user's capped set, zero weights included"}

    @property
    def bounding(self) -> Bounding:
        """Own most frequent items first, kept in fill order (ties by public item hash)."""
        return Bounding(self.max_items_per_user, Priority.OWN_COUNT, ordered=True)

    def _weights(self, bounded: BoundedSets, n_items):
        return _kernels.greedy_fill(bounded.order, bounded.indptr, bounded.items, n_items,
                                    self.cutoff)


@dataclass(frozen=True, kw_only=True, repr=False)
class GWKT(GW):
    """GW-KT-Δ0: GW with the priority order taken from public frequencies (more frequent first).

    ``public_frequencies``: ``"wordfreq:LANG"`` (the ``wordfreq`` package's list for any of its
    languages), a ``word<TAB>frequency`` file (optionally .gz) or a mapping. When not given, the
    ``wordfreq`` list of ``lang`` (default ``"en"``, the language of the recipe's text).
    Items missing from the public table rank after every listed item; ties (equal public rank, or
    both missing) are broken by the user's own frequency, then by the public item hash.
    The public table must not be derived from the private data. Privacy claim: as GW.
    """

    name = "gw_kt"
    summary = "repaired GW with priority from public frequencies"

    public_frequencies: str | Path | Mapping[str, float] | None = None
    lang: str = "en"
    public_frequencies_source: str = field(init=False)
    public_rank: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def _validate(self) -> None:
        super()._validate()
        freqs: Mapping[str, float]
        if self.public_frequencies is None:
            freqs = wordfreq_frequencies(self.lang, "lang")
            source = f"{WORDFREQ_PREFIX}{self.lang}"
        else:
            freqs, source = _load_public(self.public_frequencies)
        self._set("public_frequencies_source", source)
        self._set("public_rank", _rank_table(freqs))

    def params(self):
        return {**super().params(), "public_frequencies": self.public_frequencies_source}

    @property
    def bounding(self) -> Bounding:
        """Public rank first, then own frequency, kept in fill order."""
        return Bounding(self.max_items_per_user, Priority.PUBLIC_RANK, ordered=True,
                        public_rank=self.public_rank)


WORDFREQ_PREFIX = "wordfreq:"


def _rank_table(freqs: Mapping[str, float]) -> dict[str, int]:
    ordered = sorted(freqs.items(), key=lambda kv: (-kv[1], kv[0]))
    return {w: r for r, (w, _) in enumerate(ordered)}


def _load_public(source) -> tuple[Mapping[str, float], str]:
    if isinstance(source, Mapping):
        expected = "a mapping of str to finite numbers"
        for w, f in source.items():
            if not isinstance(w, str):
                raise ParameterError("public_frequencies", f"{w!r}: {f!r}", expected)
            check_real(f, "public_frequencies", -math.inf, math.inf, allowed=expected)
        return source, f"mapping of {len(source)} public items"
    if isinstance(source, str) and source.startswith(WORDFREQ_PREFIX):
        return wordfreq_frequencies(source[len(WORDFREQ_PREFIX):], "public_frequencies"), source
    if isinstance(source, (str, Path)):
        return load_public_frequencies(source), str(source)
    raise ParameterError("public_frequencies", source,
                         "\"wordfreq:LANG\", a path to a word<TAB>frequency file or a mapping "
                         "{item: frequency}")


def wordfreq_frequencies(lang, field: str = "public_frequencies") -> dict[str, float]:
    """The ``wordfreq`` package's public word frequencies for a language ("en", "de", ...)."""
    import wordfreq
    known = sorted(wordfreq.available_languages())
    if lang not in known:
        shown = lang if field == "lang" else f"{WORDFREQ_PREFIX}{lang}"
        expected = "a wordfreq language: " if field == "lang" else f"{WORDFREQ_PREFIX}LANG, LANG: "
        raise ParameterError(field, shown, expected + ", ".join(known))
    return wordfreq.get_frequency_dict(lang)


def load_public_frequencies(path) -> dict[str, float]:
    """Read a public ``word<TAB>frequency`` table (optionally .gz). Later duplicates are summed."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError("public frequency file not found; expected a word<TAB>frequency file",
                          path=path)
    opener = gzip.open if path.suffix == ".gz" else open
    out: dict[str, float] = {}
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as f:
            for lineno, row in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) < 2:
                    raise CorpusError("expected word<TAB>frequency, found one column",
                                      path=path, line=lineno, field="frequency")
                try:
                    freq = float(row[1])
                except ValueError:
                    raise CorpusError(f"expected a number, found {row[1]!r}", path=path,
                                      line=lineno, field="frequency") from None
                if not math.isfinite(freq) or freq < 0:
                    raise CorpusError(f"expected a finite number >= 0, found {row[1]!r}",
                                      path=path, line=lineno, field="frequency")
                out[row[0]] = out.get(row[0], 0.0) + freq
    except UnicodeDecodeError as e:
        raise CorpusError(f"not UTF-8 ({e.reason} at byte {e.start})", path=path) from None
    return out
