"""A public candidate domain inside the Gaussian set-union mechanisms (proof: public.md).

A list P of items fixed from public information before any data is seen (by default wordfreq's
words for the recipe's language, normalised by the recipe's own item extractor) is noised as a
whole, zero-weight items included. Its items then need no δ-threshold: they are released by a
weighted Benjamini-Hochberg procedure at a stated false-discovery rate q, on the p-values of their
noisy weights, with weights from public rank only; by default adaptive (run at q/π̂, π̂ an
estimate of the null weight from the same p-values: public.md §9). Items outside P keep the usual threshold ρ.

- ``PublicDomain``: P, its public ranks and its record (source, size, SHA-256);
- ``weighted_bh``: the BH decisions over P (plain, or adaptive with a weighted Storey estimate
  of the null weight), drawn exactly from closed-form probabilities (no noise value is
  materialised, as everywhere else: mechanisms/README.md §3);
- ``release_with_public_domain``: one Gaussian release (candidates and P);
- ``PolicyGaussianPublic``, ``DPSIPSPublic`` and ``DPNEPublic`` (its level 1): the mechanisms
  built on them.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import hashlib
import itertools
import json
import math
import os
import stat
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import log_ndtr, ndtri

from ..bounding import (MAX_ITEMS_PER_USER, Bounding, ItemWeights, NamesOf, UserData,
                        canonical_order, check_key)
from ..errors import CorpusError, ParameterError
from ..data.itemsets import ITEM_HASH, item_hashes
from ..privacy.noise import RandomSource, bernoulli, gaussian_release_probability
from ..privacy.params import check_bool, check_positive_int, check_real
from ..data.release import Release
from ..compiled import lazy_module
from .base import Mechanism
from .claim import Norm, Sensitivity
from .ngrams import DPNE
from .policy import PolicyGaussian
from .sips import DPSIPS

_kernels = lazy_module("dp_vocab.mechanisms._kernels")   # numba: imported on first use

WORDFREQ_PREFIX = "wordfreq:"
# Bands of public rank and their relative BH weights (normalised to mean 1 over P). Chosen on
# our two dev corpora only (reddit, pypi: benchmarks/bench_utility.py and public.md §6): common
# words are held in almost any corpus, so they get more of the false-discovery budget. The
# shape matters little there (within ±1% of true items across the shapes we tried); equal
# weights release about 2% fewer true items with more false positives.
DEFAULT_BANDS = ((10_000, 8.0), (40_000, 4.0), (100_000, 2.0), (320_000, 0.5))
MAX_PUBLIC_ITEMS = 100_000_000   # the largest rank limit of a band


@dataclass(frozen=True)
class PublicDomain:
    """The public list P in public rank order (distinct strings) and where it came from."""

    items: tuple[str, ...]
    source: str
    normalised: bool = False   # by the recipe's item extractor (``normalised_by``)

    @classmethod
    def load(cls, source, limit: int) -> "PublicDomain":
        """``"wordfreq:LANG"`` (wordfreq's list, most frequent first), a text file with one item
        per line in rank order (first tab-separated column; optionally .gz), or a sequence of
        strings. The first ``limit`` distinct items are kept."""
        check_source(source)
        words: Sequence[str]
        if isinstance(source, str) and source.startswith(WORDFREQ_PREFIX):
            words = _wordfreq_list(source[len(WORDFREQ_PREFIX):])
        elif isinstance(source, (str, Path)):
            items = _first_distinct(_read_list(Path(source)), limit)
            if not items:
                raise CorpusError("the public item list holds no item; expected one item per "
                                  "line (most frequent first)", path=Path(source))
            return cls(items, raw_source_name(source))
        else:
            words = tuple(source)
        return cls(_first_distinct(words, limit), raw_source_name(source))

    def normalised_by(self, extractor, limit: int) -> "PublicDomain":
        """Only the items the extractor turns into exactly one item equal to themselves: P must
        hold strings the data can produce (else they can only ever be false positives). For a
        pre-tokenizer that marks spaces in its items (byte-level "Ġw", metaspace "▁w"), each
        word w also stands for the item it makes of " w", its usual place in text, ranked
        just before w; if it keeps case, then also for those of its capitalised form."""
        marks_spaces = extractor(" a") != ["a"]
        # a cased extractor (with a space-marking pre-tokenizer) also meets "W", a word's
        # capitalised form, at the start of sentences
        cased = marks_spaces and extractor(" A") != extractor(" a")

        def forms(w: str):
            for v in (w, w[:1].upper() + w[1:]) if cased else (w,):
                if marks_spaces:
                    spaced = extractor(" " + v)
                    if len(spaced) == 1:
                        yield spaced[0]
                if extractor(v) == [v]:
                    yield v
        kept = (form for w in self.items for form in forms(w))
        return PublicDomain(_first_distinct(kept, limit), self.source, True)

    @classmethod
    def normalised_from(cls, source, extractor, limit: int,
                        raw: Callable[[], "PublicDomain"]) -> "PublicDomain":
        """``raw().normalised_by(extractor, limit)``, kept on disk between runs (public data
        only: the list and how it was normalised). Loading and normalising wordfreq's list costs
        about 0.7 s a run, hashing it 0.15 s; reading both back, 0.06 s. The entry's name is a
        digest of everything the result depends on (the list's version or bytes, the extractor's
        description, the limit, dp-vocab's version and its text-processing code). Its first line
        holds the SHA-256 of the items and of their hashes' bytes, both checked on every read,
        so a damaged entry is recomputed, never used (``_read_cache``)."""
        path = _cache_path(source, extractor, limit)
        cached = _read_cache(path) if path is not None else None
        if cached is not None:
            items, sha_items, hashes = cached
            out = cls(items, raw_source_name(source), True)
            out.__dict__["sha256"] = sha_items   # cached_property values, as computed
            out.__dict__["hashes"] = hashes
            return out
        out = raw().normalised_by(extractor, limit)
        if path is not None:
            _write_cache(path, out)
        return out

    def __getstate__(self) -> dict:
        """The list and its hashes only: the lookup tables are rebuilt where they are used
        (a Dask worker), not sent."""
        keep = ("items", "source", "normalised", "hashes", "sha256")
        return {k: v for k, v in self.__dict__.items() if k in keep}

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """item → public rank (0 = most frequent)."""
        return {w: r for r, w in enumerate(self.items)}

    @functools.cached_property
    def _by_hash(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(the items' hashes sorted, the rank of each), or None when two items of P share a
        hash (then ``ranks`` looks items up by name)."""
        order = canonical_order(self.hashes)   # only used when the hashes are distinct
        ranked = self.hashes[order]
        if ranked.size > 1 and (ranked[1:] == ranked[:-1]).any():
            return None
        return ranked, order

    def ranks(self, hashes: np.ndarray, names_of: Callable[[np.ndarray], list[str]]) -> np.ndarray:
        """The public rank of each item (int64, −1 outside P), from the items' hashes (uint64)
        and ``names_of(indices)``, their strings: looked up by hash, and confirmed by name for
        those whose hash is in P (a hash never decides alone)."""
        out = np.full(hashes.size, -1, dtype=np.int64)
        by_hash = self._by_hash
        if by_hash is None:
            index = self.index
            out[:] = [index.get(n, -1) for n in names_of(np.arange(hashes.size))]
            return out
        ranked, order = by_hash
        if not ranked.size:
            return out
        # the queries searched in sorted order stay in cache: 3x faster on pypi's 272k items
        queries = np.argsort(hashes)
        at = np.empty(hashes.size, dtype=np.int64)
        at[queries] = np.minimum(np.searchsorted(ranked, hashes[queries]), ranked.size - 1)
        hit = np.flatnonzero(ranked[at] == hashes)
        rank = order[at[hit]]
        items = self.items
        same = np.fromiter((items[r] == n for r, n in zip(rank.tolist(), names_of(hit))),
                           dtype=bool, count=hit.size)
        out[hit[same]] = rank[same]
        return out

    @functools.cached_property
    def item_set(self) -> frozenset[str]:
        return frozenset(self.items)

    @functools.cached_property
    def hashes(self) -> np.ndarray:
        return item_hashes(self.items)

    @functools.cached_property
    def sha256(self) -> str:
        return hashlib.sha256("\n".join(self.items).encode("utf-8", "surrogatepass")).hexdigest()

    def describe(self) -> dict:
        """What the record says about P: public facts only, never which items were held."""
        return {"source": self.source, "items": len(self.items), "sha256": self.sha256,
                "normalised_by_item_extractor": self.normalised}


def check_source(source) -> None:
    """The checks of ``PublicDomain.load`` that need not read the list: a known wordfreq
    language, an existing file, or a sequence of strings without line breaks."""
    if isinstance(source, str) and source.startswith(WORDFREQ_PREFIX):
        known = _wordfreq_languages()
        if source[len(WORDFREQ_PREFIX):] not in known:
            raise ParameterError("public_items", source,
                                 f"{WORDFREQ_PREFIX}LANG, LANG: " + ", ".join(known))
    elif isinstance(source, (str, Path)):
        if not Path(source).is_file():
            raise CorpusError("public item list not found; expected a text file with one item "
                              "per line (most frequent first)", path=Path(source))
    elif not (isinstance(source, Sequence) and all(
            isinstance(w, str) and (not w or w.splitlines() == [w]) for w in source)):
        raise ParameterError("public_items", _kind(source),
                             "\"wordfreq:LANG\", a path to a file of items (one per line) "
                             "or a list of strings without line breaks (no character "
                             "str.splitlines() breaks on: \\n, \\r, \\x0b, \\x0c, "
                             "\\x1c-\\x1e, \\x85, \\u2028, \\u2029)")


def _kind(source) -> str:
    """A list described by kind and size: a message never prints its entries."""
    try:
        return f"a {type(source).__name__} of {len(source)} entries"
    except TypeError:
        return f"a {type(source).__name__}"


def _wordfreq_module() -> Path:
    """wordfreq's ``__init__.py``, found without importing it (0.2 s, needed only when the
    list is not cached)."""
    import importlib.util
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or spec.origin is None:
        raise ParameterError("public_items", "wordfreq:…", "an installed wordfreq",
                             "Install it (pip install wordfreq), or give a file of items.")
    return Path(spec.origin)


def _wordfreq_languages() -> list[str]:
    """The languages of wordfreq's lists (its ``available_languages()``: the ``small_LANG`` and
    ``large_LANG`` data files), read from its data folder."""
    names = (p.name.split(".")[0].split("_") for p in
             (_wordfreq_module().parent / "data").glob("*.msgpack.gz") if not p.name.startswith("_"))
    return sorted({n[1] for n in names if len(n) == 2 and n[0] in ("small", "large")})


@functools.lru_cache(maxsize=8)
def _wordfreq_list(lang) -> tuple[str, ...]:
    import wordfreq
    return tuple(wordfreq.top_n_list(lang, 10 ** 7))


MAX_LIST_LINE = 1 << 20   # bytes: no public item is this long; a line is never held whole


def _read_list(path: Path) -> Iterator[str]:
    """The entries of a list file in order, read as needed (``_first_distinct`` stops at the
    limit, so a file of gigabytes is read only as far as its first ``limit`` distinct items):
    the first tab-separated column of each line; a UTF-8 byte-order mark is dropped; every
    character ``str.splitlines()`` breaks on ends an entry, as a newline does (no entry holds
    a line break). Errors name the file and line."""
    opener = gzip.open if path.suffix == ".gz" else open
    n = 0
    try:
        with opener(path, "rb") as f:
            while True:
                raw = f.readline(MAX_LIST_LINE + 1)
                if not raw:
                    return
                n += 1
                if len(raw) > MAX_LIST_LINE:
                    raise CorpusError(f"line longer than {MAX_LIST_LINE:,} bytes; expected one "
                                      f"item per line (most frequent first)", path=path, line=n)
                if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise CorpusError(f"not valid UTF-8 ({e.reason} at byte {e.start + 1} of "
                                      f"the line); expected a UTF-8 text file with one item "
                                      f"per line", path=path, line=n) from None
                for part in text.splitlines():
                    yield part.split("\t", 1)[0]
    except (OSError, EOFError, zlib.error) as e:
        after = f" after line {n}" if n else ""
        raise CorpusError(f"cannot be read{after} ({type(e).__name__}: a damaged compressed "
                          f"file, or an I/O error). Re-create or re-download it",
                          path=path) from None


def _first_distinct(words, limit: int) -> tuple[str, ...]:
    """The first ``limit`` distinct entries, in order; blank ones (never an item) skipped."""
    out: dict[str, None] = {}
    if limit < 1:
        return ()
    for w in words:
        if w not in out and w.strip():
            out[w] = None
            if len(out) >= limit:   # before the next entry is asked for: a file stops here
                break
    return tuple(out)


def raw_source_name(source) -> str:
    """The name ``PublicDomain.load`` gives the list of ``source`` (its record's ``source``)."""
    if isinstance(source, (str, Path)):
        return str(source)
    return f"list of {len(source)} public items"


def _cache_dir() -> Path | None:
    """The cache's folder, or None (no cache) when there is no home to put it in."""
    explicit = os.environ.get("DP_VOCAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if not os.path.isabs(home):   # no HOME and no passwd entry: "~" would be the cwd's
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "dp-vocab"


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """dp-vocab's version and the source of its text processing and of this module (which
    reads the lists): a new extractor or list reader, a new entry."""
    from ..version import __version__
    h = hashlib.sha256(__version__.encode())
    for f in [Path(__file__), *sorted((Path(__file__).parents[1] / "ingest" / "text").glob("*.py"))]:
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def _cache_path(source, extractor, limit: int) -> Path | None:
    """Where the normalised list of ``source`` lives, or None when it is not worth keeping (a
    list given in memory) or cannot be named exactly (an extractor without a description)."""
    if isinstance(source, str) and source.startswith(WORDFREQ_PREFIX):
        from importlib.metadata import version
        origin = f"{source} wordfreq {version('wordfreq')} {_wordfreq_module()}"
    elif isinstance(source, (str, Path)):
        try:
            digest = hashlib.sha256()
            with open(source, "rb") as f:   # in blocks: the file may be large
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            origin = digest.hexdigest()
        except OSError:
            return None
    else:
        return None
    describe = getattr(extractor, "describe", None)
    if describe is None:
        return None
    try:
        desc = json.dumps(describe(), sort_keys=True)
    except TypeError:
        return None
    folder = _cache_dir()
    if folder is None:
        return None
    key = json.dumps([origin, desc, limit, _code_digest(), ITEM_HASH])
    return folder / "public" / (hashlib.sha256(key.encode()).hexdigest() + ".bin")


_CACHE_FORMAT = b"dp-vocab public list v3"


def _own_folder(path: Path, create: bool) -> bool:
    """Whether ``path``'s folder is a real folder of this user (made if ``create``): never a
    symlink, nor another user's (a shared temporary cache folder planted by someone else)."""
    folder = path.parent
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()


def _write_cache(path: Path, domain: "PublicDomain") -> None:
    """Atomically: a new temporary file (O_EXCL | O_NOFOLLOW: a link planted at its name is
    never followed), renamed over the entry (a rename replaces a link, never writes through
    it); concurrent writers each rename a complete entry. A cache that cannot be written is
    simply not kept. The entry: a line "FORMAT n sha256(items) sha256(hashes)", the n hashes'
    8-byte words, then the items, UTF-8, one per line."""
    hash_bytes = domain.hashes.tobytes()
    head = b"%s %d %s %s\n" % (_CACHE_FORMAT, len(domain.items), domain.sha256.encode(),
                               hashlib.sha256(hash_bytes).hexdigest().encode())
    body = "\n".join(domain.items).encode("utf-8", "surrogatepass")
    if not _own_folder(path, create=True):
        return
    # unique to this writer (process, thread, call); anything already at the name (a planted
    # link included) makes O_EXCL fail: the entry is then simply not written
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}."
                         f"{next(_WRITES)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(head + hash_bytes + body)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_WRITES = itertools.count()


def _read_cache(path: Path) -> tuple[tuple[str, ...], str, np.ndarray] | None:
    """(items, their SHA-256, their hashes) of an entry ``_write_cache`` wrote, or None when
    there is none or it is not exactly that: both digests are checked, the items must be
    distinct and non-empty, and only a regular file of this user is read (a link, a FIFO or
    another user's file planted there is not)."""
    if not _own_folder(path, create=False):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    head, _, rest = data.partition(b"\n")
    fields = head.split(b" ")
    if len(fields) != 7 or b" ".join(fields[:4]) != _CACHE_FORMAT or not fields[4].isdigit():
        return None
    n = int(fields[4])
    hash_bytes, body = rest[:8 * n], rest[8 * n:]
    if (len(hash_bytes) != 8 * n
            or hashlib.sha256(body).hexdigest().encode() != fields[5]
            or hashlib.sha256(hash_bytes).hexdigest().encode() != fields[6]):
        return None
    try:
        items = tuple(body.decode("utf-8", "surrogatepass").split("\n")) if n else ()
    except UnicodeDecodeError:
        return None
    if len(items) != n or len(set(items)) != n or "" in items:
        return None   # PublicDomain's items are distinct and non-empty
    return items, fields[5].decode(), np.frombuffer(hash_bytes, dtype=np.uint64).copy()


def check_bands(bands) -> tuple[tuple[int, float], ...]:
    """[[rank limit, relative weight], ...] with increasing limits and weights ≥ 0, not all 0."""
    expected = ("a list of [rank limit, relative weight] pairs with increasing integer limits "
                f"up to {MAX_PUBLIC_ITEMS:,} and weights >= 0, e.g. [[10000, 8], [40000, 4], "
                "[100000, 2], [320000, 0.5]]")
    try:
        out = tuple((int(r), float(w)) for r, w in bands)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("public_bands", bands, expected) from None
    ok = (out and all(isinstance(r, int) and not isinstance(r, bool)
                      and not isinstance(w, bool) for r, w in bands)
          and all(a[0] < b[0] for a, b in zip(out, out[1:])) and out[0][0] >= 1
          and out[-1][0] <= MAX_PUBLIC_ITEMS
          and all(math.isfinite(w) and w >= 0 for _, w in out) and any(w > 0 for _, w in out))
    if ok:   # weights are relative: bound their spread so the normalisation stays exact enough
        top = max(w for _, w in out)
        ok = all(w == 0 or 1e-12 <= w / top for _, w in out) and top < 1e300
    if not ok:
        raise ParameterError("public_bands", bands, expected)
    return out


def band_weights(n_items: int, bands: Sequence[Sequence[float]]) -> np.ndarray:
    """BH weight of each rank 0..n_items−1: its band's relative weight, scaled to mean 1."""
    limits = np.array([r for r, _ in bands])
    rel = np.array([w for _, w in bands])
    raw = rel[np.searchsorted(limits, np.arange(n_items), side="right")]
    total = raw.sum()
    return raw * (n_items / total) if total > 0 else raw


# ---- the release ---------------------------------------------------------------------------------

def _keep_with_log_probability(log_p: np.ndarray, random: RandomSource) -> np.ndarray:
    """Exact Bernoulli(exp(log_p)) draws; a probability near 1 is drawn as its complement
    −expm1(log_p) so that its small complement keeps its relative accuracy."""
    if not np.isfinite(log_p[log_p != -np.inf]).all():   # fail closed on NaN / +inf
        raise FloatingPointError("a release probability is not a number")
    keep = np.empty(log_p.size, dtype=bool)
    low = log_p < -math.log(2.0)
    keep[low] = bernoulli(np.exp(log_p[low]), random)
    keep[~low] = ~bernoulli(-np.expm1(log_p[~low]), random)
    return keep


def weighted_bh(weights: np.ndarray, bh_weights: np.ndarray, sigma: float, fdr: float,
                random: RandomSource, other_discoveries: int = 0,
                adaptive_lambda: float | None = None) -> np.ndarray:
    """Decisions of weighted Benjamini-Hochberg at level q = ``fdr`` over m public items with
    pre-noise weights H (0 for items nobody holds), noisy values y = H + N(0, σ²), p-values
    p = Q(y/σ) and BH weights w ≥ 0 (mean 1). ``other_discoveries`` r₀: items released beside
    P by noise independent of P's (the candidates outside P, earlier rounds); they count as
    discoveries, so the false-discovery bound covers the whole release (public.md §5).

    Item x is rejected at step k when p_x ≤ c_x(k) = min(1, w_x·q·(k + r₀)/m); K_x is the
    smallest such k (∞ if none ≤ m), so P(K_x ≤ k) = F_x(k) = Φ(H_x/σ + Φ⁻¹(c_x(k)))
    (= c_x(k) when H_x = 0). BH releases {x : K_x ≤ k*}, k* = max{k : #{x : K_x ≤ k} ≥ k}.
    We find k* from the top, as BH does, drawing only the events K_x ≤ k: start with k = m and
    all items; keep each item with probability F_x(k)/F_x(k_before) (given it was kept at
    k_before); if n ≥ k items remain, k* = k and they are the release, else continue with
    k = n (public.md §3). Returns a mask over the m items. No noise value or p-value is
    materialised.

    With ``adaptive_lambda`` λ: weighted Storey-type adaptive BH (public.md §9). First the
    events p_x ≤ λ are drawn (probability Φ(H_x/σ + Φ⁻¹(λ))), giving the null-weight estimate
    π̂ = (max w + Σ_x w_x·1{p_x > λ})/(m(1 − λ)); then BH runs as above at level q/π̂ with
    critical values capped at λ, continuing from the kept items with ratios F_x(k)/F_x(λ)."""
    H = np.asarray(weights, dtype=np.float64)
    w = np.asarray(bh_weights, dtype=np.float64)
    m = H.size
    out = np.zeros(m, dtype=bool)
    alive = np.flatnonzero(w > 0)
    if alive.size == 0:
        return out

    def log_cdf(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """log P(p_x ≤ c_x) for the items idx."""
        h = H[idx]
        held = h > 0
        res = np.log(c)
        if held.any():
            res[held] = log_ndtr(h[held] / sigma + ndtri(c[held]))
        return res

    level, cap = fdr, 1.0
    log_before = np.zeros(alive.size)
    if adaptive_lambda is not None:
        lam = float(adaptive_lambda)
        log_now = log_cdf(np.full(alive.size, lam), alive)
        below = _keep_with_log_probability(log_now, random)
        null_weight = (w.max() + w[alive[~below]].sum()) / (m * (1.0 - lam))
        level, cap = fdr / null_weight, lam
        alive, log_before = alive[below], log_now[below]
    k = m
    while alive.size:
        c = np.minimum(w[alive] * (level * (k + other_discoveries) / m), cap)
        log_now = log_cdf(c, alive)
        keep = _keep_with_log_probability(np.minimum(log_now - log_before, 0.0), random)
        alive, log_before = alive[keep], log_now[keep]
        if alive.size >= k:
            break
        k = alive.size
    out[alive] = True
    return out


def release_with_public_domain(h: ItemWeights, domain: PublicDomain, bh_weights: np.ndarray,
                               sigma: float, threshold: float, fdr: float,
                               random: RandomSource, released_before: int = 0,
                               adaptive_lambda: float | None = None,
                               ranks: np.ndarray | None = None) -> list[str]:
    """One Gaussian release with a public domain: candidates outside P released iff
    H + N(0, σ²) > ρ (exact Bernoulli), items of P (all of them) by ``weighted_bh`` (adaptive
    if ``adaptive_lambda`` is set), counting those and the ``released_before`` items (earlier
    rounds) as other discoveries. ``ranks``: ``domain.ranks`` of h's items, if known. Returns
    the released items (unsorted)."""
    pos = ranks if ranks is not None else domain.ranks(h.hashes, h.names_at)
    outside = np.flatnonzero(pos < 0)
    keep = bernoulli(gaussian_release_probability(h.weights[outside], threshold, sigma), random)
    released = h.names_at(outside[keep])
    on_p = np.zeros(len(domain.items), dtype=np.float64)
    inside = pos >= 0
    on_p[pos[inside]] = h.weights[inside]
    chosen = weighted_bh(on_p, bh_weights, sigma, fdr, random,
                         other_discoveries=len(released) + released_before,
                         adaptive_lambda=adaptive_lambda)
    items = domain.items
    return released + [items[i] for i in np.flatnonzero(chosen).tolist()]


# ---- the mechanisms --------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True, repr=False)
class _PublicDomainParams(Mechanism):
    """Parameters shared by the mechanisms with a public domain (validated with the rest)."""

    public_items: str | Path | Sequence[str] = "wordfreq:en"
    public_bands: Sequence[Sequence[float]] = DEFAULT_BANDS
    # 0.8%: the bound is on the expected share; a margin keeps single runs under 1% (public.md §6)
    public_fdr: float = 0.008
    public_adaptive: bool = True    # Storey-type adaptive BH (public.md §9, measured §6)
    public_lambda: float = 0.5
    # P as read (raw), until ``for_extractor`` puts the normalised list in its place; loaded
    # on first use, since a recipe run only ever needs the normalised one (often kept on disk)
    _domain: PublicDomain | None = field(init=False, default=None, repr=False, compare=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("public_fdr", check_real(
            self.public_fdr, "public_fdr", 0.0, 0.5, low_open=True,
            allowed="a false-discovery rate in (0, 0.5], e.g. 0.01"))
        self._set("public_adaptive", check_bool(self.public_adaptive, "public_adaptive"))
        self._set("public_lambda", check_real(
            self.public_lambda, "public_lambda", 0.0, 1.0, low_open=True, high_open=True,
            allowed="a p-value cut λ in (0, 1), e.g. 0.5"))
        bands = check_bands(self.public_bands)
        self._set("public_bands", bands)
        check_source(self.public_items)

    @property
    def domain(self) -> PublicDomain:
        domain = self._domain
        if domain is None:
            domain = self._use_domain(self._raw_domain())
        return domain

    def _raw_domain(self) -> PublicDomain:
        """P as read from its source (before any extractor or mechanism filters it)."""
        return PublicDomain.load(self.public_items, int(self.public_bands[-1][0]))

    def _use_domain(self, domain: PublicDomain) -> PublicDomain:
        """Make ``domain`` this mechanism's list; returns the list as kept."""
        self._set("_domain", domain)
        return domain

    def for_extractor(self, extractor):
        """A copy whose list holds only what ``extractor`` yields as one item equal to itself."""
        out = copy.copy(self)
        out._use_domain(PublicDomain.normalised_from(
            self.public_items, extractor, self.public_bands[-1][0], self._raw_domain))
        return out

    @property
    def public_item_set(self) -> frozenset[str]:
        return self.domain.item_set

    @property
    def _adaptive_lambda(self) -> float | None:
        """λ of adaptive BH (public.md §9), or None for plain weighted BH."""
        return self.public_lambda if self.public_adaptive else None

    def _bh_weights(self, items: int | None = None) -> np.ndarray:
        return band_weights(len(self.domain.items) if items is None else items, self.public_bands)

    def params(self):
        return {**super().params(), "public_items": self.domain.source,
                "public_bands": [list(b) for b in self.public_bands],
                "public_fdr": self.public_fdr, "public_adaptive": self.public_adaptive,
                "public_lambda": self.public_lambda}

    def privacy(self):
        how = (f"adaptive (Storey-type, λ = {self.public_lambda:g}) weighted Benjamini-Hochberg"
               if self.public_adaptive else "weighted Benjamini-Hochberg")
        return {**super().privacy(), "public_domain": self.domain.describe(),
                "public_release": f"{how} at false-discovery rate "
                                  f"{self.public_fdr:g} over every item of the public list "
                                  f"(zero weights included); BH weights by public rank band",
                "release_decisions": "exact Bernoulli draws of closed-form probabilities "
                                     "(no noise value is materialised)"}

    def _sensitivity_text(self) -> str:
        return ("L2 <= 1 (l2-contractive; lone items outside the public list weigh "
                "<= 1/sqrt(t))")


@dataclass(frozen=True, kw_only=True, repr=False)
class _PublicCutoff(_PublicDomainParams):
    """The policy's cutoff of public items, (public_cutoff + α)·σ, σ the noise of the release
    (of level 1 for DPNE) that tests them (public.md §1)."""

    if TYPE_CHECKING:
        alpha: float   # the policy's α, a field of the mechanism this is mixed into

    public_cutoff: float = 3.0
    # a user's items outside P, capped apart (public.md §10): ρ then maximises over t ≤ 10
    # only (for policy_gaussian_public at ε = 3 its t = 1 value, δ = 1e-5; DPNE's level 1, with
    # its larger σ_1, reaches its maximum at t = 10)
    max_outside_items: int | None = 10

    def _validate(self) -> None:
        super()._validate()
        expected = ("a number of σ from -1000 to 1000 with public_cutoff + alpha >= 0.001 (the "
                    "cutoff of public items is (public_cutoff + alpha)·σ)")
        c = check_real(self.public_cutoff, "public_cutoff", -1e3, 1e3, allowed=expected)
        if not c + self.alpha >= 1e-3:
            raise ParameterError("public_cutoff", self.public_cutoff, expected)
        self._set("public_cutoff", c)
        if self.max_outside_items is not None:
            self._set("max_outside_items", check_positive_int(
                self.max_outside_items, "max_outside_items", maximum=MAX_ITEMS_PER_USER))

    @property
    def max_lone_items(self) -> int:
        cap = self.max_outside_items
        return self.max_items_per_user if cap is None else min(cap, self.max_items_per_user)

    def _outside_capped(self, bounding: Bounding) -> Bounding:
        """``bounding`` after keeping ≤ ``max_outside_items`` items outside P a user."""
        if self.max_outside_items is None:
            return bounding
        return replace(bounding, max_outside=self.max_outside_items, listed=self.domain)

    def params(self):
        return {**super().params(), "public_cutoff": self.public_cutoff,
                "max_outside_items": self.max_outside_items}

    def privacy(self):
        out = super().privacy()
        if self.max_outside_items is not None:
            out["items_outside_public_list"] = (
                f"each user keeps at most {self.max_outside_items} (its most frequent), so the "
                f"threshold covers t <= {self.max_lone_items} lone items")
        return out


@dataclass(frozen=True, kw_only=True, repr=False)
class PolicyGaussianPublic(_PublicCutoff, PolicyGaussian):
    """Policy Gaussian with a public domain. Privacy claim (public.md):

    - bounding: each user keeps ≤ K = ``max_outside_items`` of its items outside P (its most
      frequent; §10), then ≤ Δ0;
    - L2-descent with per-item cutoffs Γ_x = (public_cutoff + α)·σ on P, ρ + α·σ elsewhere:
      ‖H(D) − H(D′)‖₂ ≤ 1, X's t ≤ min(K, Δ0) unique items outside P weigh ≤ 1/√t;
    - noise N(0, σ²), σ = σ_AGM(ε, δ/2; 1), on every candidate and every item of P;
    - outside P: threshold ρ = max_{t ≤ min(K, Δ0)} [1/√t − σΦ⁻¹(δ_t(δ/2))]; on P: adaptive
      weighted BH at q/π̂, π̂ the weighted Storey estimate at ``public_lambda`` (§9;
      ``public_adaptive=False``: plain weighted BH at q);
    - guarantee: (ε, δ/2 + δ/2)-DP; false-discovery rate over the release ≤ q.
    """

    name = "policy_gaussian_public"
    summary = "Policy Gaussian + public domain (weighted BH at FDR q on a public list)"

    # Policy Gaussian's α = 5 and (3 + 5)σ on P were tuned without the outside cap; with it,
    # α = 2 outside P (cutoff ρ + 2σ) and the same 8σ on P, and λ = 0.95, each release more on
    # both dev corpora at both δ (public.md §10)
    alpha: float = 2.0
    public_cutoff: float = 6.0
    public_lambda: float = 0.95
    public_gamma: float = field(init=False)

    @property
    def bounding(self) -> Bounding:
        """Δ0 as Policy Gaussian, after keeping ≤ ``max_outside_items`` items outside P."""
        return self._outside_capped(super().bounding)

    def _calibrate(self):
        super()._calibrate()
        self._set("public_gamma", (self.public_cutoff + self.alpha) * self.noise_scale)

    def privacy(self):
        return {**super().privacy(), "public_items_cutoff": self.public_gamma}

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L2, 1.0, lone_item_power=0.5,
                           cap=max(self.cutoff, self.public_gamma), text=self._sensitivity_text())

    def _histogram(self, data: UserData, key: bytes) -> ItemWeights:
        return self._histogram_and_ranks(data, key)[0]

    def _histogram_and_ranks(self, data: UserData, key: bytes) -> tuple[ItemWeights, np.ndarray]:
        """The candidates in canonical order, and their public ranks (−1 outside P)."""
        rows = data.bounded_rows(key, self.bounding)
        ranks = rows.bounded.listed_ranks   # looked up by the outside cap, if it ran here
        if ranks is None:
            ranks = self.domain.ranks(rows.hashes, rows.names_of)
        gammas = np.where(ranks >= 0, self.public_gamma, self.cutoff)
        b = rows.bounded
        weights = _kernels.l2_descent_cutoffs(b.order, b.indptr, b.items, rows.n_items, gammas)
        cand = np.flatnonzero(weights > 0)
        cand = cand[canonical_order(rows.hashes[cand])]   # what .canonical() gives, one pass
        return ItemWeights(NamesOf(rows.names_of, cand), rows.hashes[cand], weights[cand]), \
            ranks[cand]

    def release(self, itemsets, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        random = random if random is not None else RandomSource()
        key = self._key(key, random)
        h, ranks = self._histogram_and_ranks(itemsets, key)
        released = release_with_public_domain(h, self.domain, self._bh_weights(),
                                              self.noise_scale, self.threshold,
                                              self.public_fdr, random,
                                              adaptive_lambda=self._adaptive_lambda, ranks=ranks)
        return Release(items=sorted(released), mechanism=self.registry_name,
                       params=self.params(), epsilon=self.epsilon, delta=self.delta,
                       randomness=random.describe(), privacy=self.privacy(),
                       ledger=[self.stage().to_dict()])

    @staticmethod
    def _key(key, random):
        return check_key(key) if key is not None else random.key()


@dataclass(frozen=True, kw_only=True, repr=False)
class DPSIPSPublic(_PublicDomainParams, DPSIPS):
    """DP-SIPS with a public domain. Privacy claim (public.md §4): rounds 1..R−1 as DP-SIPS;
    the last round releases the candidates outside P by its threshold τ_R and the items of P
    not yet released by (adaptive, §9) weighted BH at q (earlier releases counted as
    discoveries), all with its σ_R. Guarantee (ε, δ)-DP as DP-SIPS; false-discovery rate over
    the whole release ≤ q (only the last round can release an item nobody holds)."""

    name = "dp_sips_public"
    summary = "DP-SIPS + public domain (weighted BH at FDR q in the last round)"

    def sensitivity(self) -> Sensitivity:
        s = super().sensitivity()
        return Sensitivity(s.norm, s.bound, s.monotone, s.lone_item_power, exact=s.exact,
                           text=self.scope + self._sensitivity_text())

    def release(self, itemsets, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        random = random if random is not None else RandomSource()
        key = PolicyGaussianPublic._key(key, random)
        removed: set = set()
        per_round = []
        for r in range(1, self.rounds + 1):
            h = self._round(itemsets, frozenset(removed), key, r)
            sigma, tau = self.round_sigmas[r - 1], self.round_thresholds[r - 1]
            if r < self.rounds:
                keep = bernoulli(gaussian_release_probability(h.weights, tau, sigma), random)
                released = h.names_at(np.flatnonzero(keep))
            else:  # P minus the items already released: fixed by the earlier output
                rest = PublicDomain(tuple(x for x in self.domain.items if x not in removed),
                                    self.domain.source, self.domain.normalised)
                released = release_with_public_domain(
                    h, rest, self._bh_weights_of(rest), sigma, tau, self.public_fdr, random,
                    released_before=len(removed), adaptive_lambda=self._adaptive_lambda)
            removed.update(released)
            per_round.append({"round": r, "released": len(released)})
        return Release(items=sorted(removed), mechanism=self.registry_name, params=self.params(),
                       epsilon=self.epsilon, delta=self.delta, randomness=random.describe(),
                       privacy=self.privacy(), ledger=[self.stage().to_dict()],
                       details={"rounds": per_round})

    def _bh_weights_of(self, rest: PublicDomain) -> np.ndarray:
        """The bands by each remaining item's public rank, rescaled to mean 1 over the rest."""
        full = self._bh_weights()
        index = self.domain.index
        w = full[[index[x] for x in rest.items]] if rest.items else full[:0]
        return w * (w.size / w.sum()) if w.size and w.sum() > 0 else w


@dataclass(frozen=True, kw_only=True, repr=False)
class DPNEPublic(_PublicCutoff, DPNE):
    """DPNE whose level 1 has a public domain (ngrams.md §1b, public.md). Privacy claim:

    - level 1 is ``policy_gaussian_public``'s release with σ_1 and ρ_1: each user keeps its
      unigrams in P and ≤ K = ``max_outside_items`` others (its most frequent), then Δ0; with
      the L2-descent policy, per-item cutoffs (public_cutoff + α)·σ_1 on P and ρ_1 + α·σ_1
      elsewhere; every item of P noised; P by (adaptive) weighted BH at q, the rest by
      ρ_1 = max_{t ≤ min(K, Δ0)} [1/√t − σ_1Φ⁻¹(δ_t(δ/2))] (δ/2 for X's unigrams outside P);
    - levels n ≥ 2 unchanged (public candidates C_n from the released (n−1)-grams);
    - guarantee: (ε, δ/2 + δ/2)-DP, the levels composing as one Gaussian with σ*.
    """

    name = "dpne_public"
    summary = "DPNE with a public word list at level 1 (weighted BH at FDR q)"

    # DPNE's defaults: the public-domain mixins, Mechanisms themselves, would otherwise bring
    # back Mechanism's Δ0 = 100 and uniform sampling in place of DPNE's
    max_items_per_user: int = DPNE.max_items_per_user
    sampling: str = DPNE.sampling

    def _bounding(self, n: int) -> Bounding:
        """Level 1 keeps ≤ ``max_outside_items`` unigrams outside P a user (public.md §10),
        so ρ_1 covers that many lone unigrams; levels n ≥ 2 as DPNE."""
        own = super()._bounding(n)
        return self._outside_capped(own) if n == 1 else own

    # the joiner of the n-grams this mechanism releases: a list item holding one of its
    # characters could also be released as an n-gram (two levels, one string), so it is
    # dropped wherever the list becomes the domain (``_use_domain``), from Python as from recipes
    _joiner: str = field(init=False, default=" ", repr=False, compare=False)

    def _use_domain(self, domain: PublicDomain) -> PublicDomain:
        chars = set(self._joiner)
        if any(chars.intersection(w) for w in domain.items):
            domain = PublicDomain(tuple(w for w in domain.items if not chars.intersection(w)),
                                  domain.source, domain.normalised)
        return super()._use_domain(domain)

    def _joined_by(self, joiner: str) -> "DPNEPublic":
        """This mechanism for n-grams joined by ``joiner`` (a copy if it differs)."""
        if joiner == self._joiner:
            return self
        out = copy.copy(self)
        out._set("_joiner", joiner)
        domain = self._domain
        # a raw list is read again (it may hold items the old joiner removed)
        out._set("_domain", None)
        if domain is not None and domain.normalised:
            out._use_domain(domain)
        return out

    def for_extractor(self, extractor):
        """As the other public-domain mechanisms, for the extractor's joiner."""
        return super(DPNEPublic, self._joined_by(getattr(extractor, "joiner", " "))) \
            .for_extractor(extractor)

    def level_histogram(self, data, n: int, previous: list, key: bytes) -> dict[str, float]:
        return super(DPNEPublic, self._joined_by(getattr(data, "joiner", self._joiner))) \
            .level_histogram(data, n, previous, key)

    def release(self, data, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        return super(DPNEPublic, self._joined_by(getattr(data, "joiner", self._joiner))) \
            .release(data, key, random)

    def privacy(self):
        out = super().privacy()
        if self.policy == "l2_descent":   # the "weighted" policy has no cutoffs
            out["public_items_cutoff_level_1"] = \
                (self.public_cutoff + self.alpha) * self.level_sigmas[0]
        return out

    def _level_weights(self, levels, n: int, key: bytes, rho: float):
        if n != 1 or self.policy != "l2_descent":
            return super()._level_weights(levels, n, key, rho)
        grams, b = levels.level_rows(1, key)
        sigma = self.level_sigmas[0]
        listed = b.listed_ranks   # looked up by the outside cap, if it ran here
        if listed is None:
            index = self.domain.index
            listed = np.fromiter((0 if g[0] in index else -1 for g in grams), dtype=np.int64,
                                 count=len(grams))
        gammas = np.where(listed >= 0, (self.public_cutoff + self.alpha) * sigma,
                          rho + self.alpha * sigma)
        w = _kernels.l2_descent_cutoffs(b.order, b.indptr, b.items, len(grams), gammas)
        pos = np.flatnonzero(w > 0)
        return [grams[i] for i in pos.tolist()], w[pos]

    def _release_level1(self, grams, w, rho, sigma, random, join_str):
        names = [join_str(g) for g in grams]
        h = ItemWeights(names, item_hashes(names), w)
        released = release_with_public_domain(h, self.domain, self._bh_weights(), sigma, rho,
                                              self.public_fdr, random,
                                              adaptive_lambda=self._adaptive_lambda)
        return [(s,) for s in released]


__all__ = ["DEFAULT_BANDS", "DPNEPublic", "DPSIPSPublic", "PolicyGaussianPublic", "PublicDomain",
           "band_weights", "check_bands", "release_with_public_domain", "weighted_bh"]
