"""The public item list P of the public-domain mechanisms, and its on-disk cache.

P is fixed from public information before any data is seen: wordfreq's words for a language, a
file of items in rank order, or a list from Python. A recipe's list is normalised by its item
extractor (only strings the data can produce stay), and the normalised list is kept on disk
between runs, named by a digest of everything it depends on. Public data only: no privacy
claim here (how P's items are released: public.py and public.md).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gzip
import hashlib
import itertools
import json
import os
import stat
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bounding import canonical_order
from ..data.itemsets import ITEM_HASH, item_hashes
from ..errors import CorpusError, ParameterError

WORDFREQ_PREFIX = "wordfreq:"


def _public_symbols() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Texts every corpus writes that no word list holds, as two tiers: the ASCII punctuation
    marks, white space runs and the numbers below 100 (and 00-09), among the most frequent
    units of any text; then pairs of marks, runs of one mark, the numbers below 1,000 and the
    years 1900-2099. Public facts, the same for every corpus."""
    import string
    marks = string.punctuation
    space = ["\n", "\n\n", "\t", "\r\n", "  ", "   ", "    "]
    first = [*marks, *space, *(str(i) for i in range(100)), *(f"{i:02d}" for i in range(10))]
    pairs = [a + b for a in marks for b in marks]
    runs = [m * n for m in marks for n in range(3, 7)]
    later = [*pairs, *runs, *(str(i) for i in range(100, 1000)),
             *(str(y) for y in range(1900, 2100))]
    return tuple(first), tuple(later)


PUBLIC_SYMBOLS, LATER_SYMBOLS = _public_symbols()
# the later tier enters P after this many entries (the words of the most frequent band)
LATER_SYMBOLS_AT = 10_000

# a word of at most this many characters also stands for its form in capitals (SQL, NOT)
SHORT_WORD = 4

# Marks a pre-tokenizer may keep in a word's unit (Metaspace: "▁word,"). Commas and full stops
# are each about 1% of the characters of edited English (the Brown corpus: 0.98% and 0.83%), at
# some 6 characters a word with its space: about one word in 20 is followed by each, so by
# Zipf's law "▁w," is about as frequent as the entry ranked 20 times lower than "▁w"
PUNCTUATED_MARKS = (",", ".")
PUNCTUATED_EVERY = 20


def _with_marked_entries(entries: Iterable[str], marker: str,
                         makes: Callable[[str], bool]) -> Iterator[str]:
    """``entries``, each of ``marker`` then letters, at position i, followed after position
    ``PUNCTUATED_EVERY`` · i by its forms with each of ``PUNCTUATED_MARKS`` that the data can
    produce (``makes``: not too long for the extractor, for one)."""
    waiting: collections.deque[tuple[int, str]] = collections.deque()
    for i, entry in enumerate(entries):
        yield entry
        if entry.startswith(marker) and entry[len(marker):].isalpha():
            waiting.extend((PUNCTUATED_EVERY * i, entry + m) for m in PUNCTUATED_MARKS)
        while waiting and waiting[0][0] <= i:
            form = waiting.popleft()[1]
            if makes(form):
                yield form


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
        just before w; if it keeps case, then also for those of its capitalised form; and
        when it splits " w" (byte-level " i've" → "Ġi", "'ve"), for each part. Such a
        pre-tokenizer also makes units of what no word list holds (punctuation, white space,
        numbers): the units it makes of ``PUBLIC_SYMBOLS`` come first in P, as the marks
        are among the most frequent units of any text. When it also keeps a trailing mark in a
        word's unit (Metaspace "▁w,"), each entry of letters at position i also stands for its
        forms with ``PUNCTUATED_MARKS``, after position ``PUNCTUATED_EVERY`` · i of the list
        without them."""
        marks_spaces = extractor(" a") != ["a"]
        # a cased extractor (with a space-marking pre-tokenizer) also meets "W", a word's
        # capitalised form, at the start of sentences
        cased = marks_spaces and extractor(" A") != extractor(" a")
        single_units = getattr(extractor, "n_max", 1) == 1

        def cased_forms(w: str):
            yield w
            yield w[:1].upper() + w[1:]
            if len(w) <= SHORT_WORD:   # acronyms are short words written in capitals
                yield w.upper()

        def forms(w: str):
            for v in dict.fromkeys(cased_forms(w) if cased else (w,)):
                if marks_spaces:
                    spaced = extractor(" " + v)
                    if len(spaced) == 1 or single_units:   # not n-grams of the parts
                        yield from spaced
                if extractor(v) == [v]:
                    yield v

        def symbol_units(s: str):
            for text in (" " + s, s):
                made = extractor(text)
                if len(made) == 1 and made[0].splitlines() == [made[0]]:
                    yield made[0]
        words: Iterator[str] = (form for w in self.items for form in forms(w))
        kept: Iterator[str]
        if marks_spaces:
            first = (u for s in PUBLIC_SYMBOLS for u in symbol_units(s))
            later = (u for s in LATER_SYMBOLS for u in symbol_units(s))
            head = _first_distinct(itertools.chain(first, words), LATER_SYMBOLS_AT)
            kept = itertools.chain(head, later, words)
            word = extractor(" a")
            marker = word[0][:-1] if len(word) == 1 and word[0].endswith("a") else None
            if marker is not None and all(extractor(" a" + m)[:1] == [marker + "a" + m]
                                          for m in PUNCTUATED_MARKS):
                kept = _with_marked_entries(
                    _first_distinct(kept, limit), marker,
                    lambda form: extractor(" " + form[len(marker):])[:1] == [form])
        else:
            kept = words
        return PublicDomain(_first_distinct(kept, limit), self.source, True)

    @classmethod
    def normalised_from(cls, source, extractor, limit: int,
                        raw: Callable[[], "PublicDomain"]) -> "PublicDomain":
        """``raw().normalised_by(extractor, limit)``, kept on disk between runs (public data
        only: the list and how it was normalised). The entry's name is a digest of everything
        the result depends on (the list's version or bytes, the extractor's description and
        ``code_digest()``, the limit, dp-vocab's version and this module's code). Its first line
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

    def without_characters(self, chars: str) -> "PublicDomain":
        """P without the items that hold a character of ``chars`` (this list itself if none
        does)."""
        drop = set(chars)
        if not drop:
            return self
        text = "\n".join(self.items)   # one search per character: no item holds a line break
        if not any(c in text for c in drop):
            return self
        return PublicDomain(tuple(w for w in self.items if not drop.intersection(w)),
                            self.source, self.normalised)

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
        # the queries searched in sorted order: consecutive searches touch the same cache lines
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
    language, an existing file, or a sequence of strings without line breaks (a
    ``PublicDomain``, already read, passes)."""
    if isinstance(source, PublicDomain):
        return
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
    """wordfreq's ``__init__.py``, found without importing it (the import is slow and needed
    only when the list is not cached)."""
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
def _reader_digest() -> str:
    """dp-vocab's version and the source of this module (which reads and stores the lists)."""
    from ..version import __version__
    return hashlib.sha256(__version__.encode() + Path(__file__).read_bytes()).hexdigest()


def _cache_path(source, extractor, limit: int) -> Path | None:
    """Where the normalised list of ``source`` lives, or None when it is not worth keeping (a
    list given in memory) or cannot be named exactly (an extractor without a description or
    without ``code_digest()``, the digest of the code it runs: a new text pipeline, a new
    entry)."""
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
    code_digest = getattr(extractor, "code_digest", None)
    if describe is None or code_digest is None:
        return None
    try:
        desc = json.dumps(describe(), sort_keys=True)
    except TypeError:
        return None
    folder = _cache_dir()
    if folder is None:
        return None
    key = json.dumps([origin, desc, limit, _reader_digest(), code_digest(), ITEM_HASH])
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


__all__ = ["WORDFREQ_PREFIX", "PublicDomain", "check_source", "raw_source_name"]
