"""Tokenizer models trained on a DP count table by ``tokenizers``' BPE trainer.

A BPE, WordPiece or Unigram trainer reads a corpus only through its pre-tokenizer's word counts.
BPE is learned by its own trainer; WordPiece and Unigram from the BPE trainer's merges on the
same table (``_wordpiece``, ``_unigram``).
Given the released units (the words the exported pre-tokenizer makes) and their DP counts, the
trainer sees the table it would have counted from the raw text, with noise, clipping and without
the units no DP release keeps. Everything here is post-processing of the release and of public
inputs (the byte alphabet, the public list the mechanism used).
"""

from __future__ import annotations

import functools
import json
import math
import re
import statistics
import string
from collections import Counter
from collections.abc import Iterator, Mapping

# a unit never holds white space (pre-tokenizers split on it or mark it), so one space
# separates units in the strings the trainer reads
_SPACE = re.compile(r"\s")


def _batches(counts: Mapping[str, int], batch_chars: int = 1 << 20) -> Iterator[list[str]]:
    """Strings ``"u u u"`` holding each unit as many times as its count."""
    batch: list[str] = []
    size = 0
    for unit, count in counts.items():
        if count <= 0:
            continue
        text = (unit + " ") * count
        batch.append(text)
        size += len(text)
        if size >= batch_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def training_counts(counts: Mapping[str, float], max_words: int,
                    resolution: float = 100.0) -> dict[str, int]:
    """Integer counts for a trainer: scaled down to add up to at most ``max_words`` (the
    trainers' time grows with the words they read), and up until the smallest count is
    ``resolution`` (DP counts in other units, such as weighted users, would lose their
    differences to rounding). A unit keeps a count ≥ 1. Units holding white space are left
    out: no pre-tokenizer makes them."""
    positive = {u: float(c) for u, c in counts.items() if c > 0 and u and not _SPACE.search(u)}
    if not positive:
        return {}
    total, smallest = sum(positive.values()), min(positive.values())
    scale = min(max_words / total, max(1.0, resolution / smallest))
    return {u: max(1, round(c * scale)) for u, c in positive.items()}


def count_floor(release) -> float:
    """A released unit's least count for a trainer: the count noise's scale σ the record
    states (0 when it states none). The selection released the unit, so users hold it, and a
    count below σ cannot be told from 0; left at 0 the trainer would never see a released
    word, and would split it. Post-processing of the release's parameters."""
    scale = (release.counts_info or {}).get("scale")
    if isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0:
        return float(scale)
    return 0.0


class PublicPrior:
    """Public word frequencies that fill the training table below the released units: the
    trainers then learn pieces for words no DP release keeps (names, rare inflections) from
    public text statistics instead of not at all. ``"wordfreq:LANG"``: wordfreq's list.

    A listed word w that is not released enters in each form the release writes words in
    (``word_forms``: after a space or not, lower-case, Capitalised or in CAPITALS, as the
    exported pipeline makes them), and a unit u it makes that is not released enters with count
    max(1, r · min(m, T · Σ f_w · s)) over the listed words and forms that make u: f_w a word's
    public frequency (wordfreq folds case and place), s the form's share of the released
    letter units' DP counts, T the released units' total count and m their smallest count, so
    a public unit never outweighs a released one, and r the ``usage_ratio`` of the list's
    words in this corpus, as the release shows it. Public data and the release only:
    post-processing."""

    PREFIX = "wordfreq:"

    def __init__(self, source: str, words: int = 150_000):
        from ..errors import ParameterError
        if not (isinstance(source, str) and source.startswith(self.PREFIX)):
            raise ParameterError("export.public_prior", source,
                                 "null or \"wordfreq:LANG\" (public word frequencies)",
                                 "For example \"wordfreq:en\".")
        import wordfreq
        lang = source[len(self.PREFIX):]
        if lang not in wordfreq.available_languages():
            raise ParameterError("export.public_prior", source,
                                 "a language wordfreq has, e.g. \"wordfreq:en\"")
        self.source, self.lang, self.words = source, lang, words

    def frequencies(self) -> list[tuple[str, float]]:
        return list(_first_words(self.lang, self.words))

    def describe(self, languages=None) -> list[dict]:
        """Public facts for the model card: the list, its version and digest, and those of the
        script lists (``script_lists``) of ``languages`` (``script_languages`` of the release;
        None: every list it may add)."""
        import hashlib
        from importlib.metadata import version

        def digest(pairs) -> str:
            h = hashlib.sha256()
            for w, f in pairs:
                h.update(f"{w}\t{f!r}\n".encode("utf-8", "surrogatepass"))
            return h.hexdigest()
        main = self.frequencies()
        out = [{"source": f"{self.source} (wordfreq {version('wordfreq')}; the trainer's "
                          f"prior)",
                "items": len(main), "sha256": digest(main)}]
        every = set(SCRIPT_LANGUAGES.values())
        for lang in sorted((every if languages is None else every & set(languages))
                           - {self.lang}):
            words = _first_words(lang, SCRIPT_WORDS)
            out.append({"source": f"wordfreq:{lang} (wordfreq {version('wordfreq')}; the "
                                  f"trainer's prior for its script, which the release holds)",
                        "items": len(words), "sha256": digest(words)})
        return out

    def fill(self, units: Mapping[str, float], units_of, new_characters: int,
             text_of=None, every_script_word: bool = False) -> dict[str, float]:
        """``units`` with the listed words that are not released, and the words of the
        ``script_lists`` of the scripts the released units are written in (``text_of``: a
        unit's text, for byte-level units), made of characters the released units or
        printable ASCII hold or of the new characters ``_new_characters`` picks (at most
        ``new_characters``). A word the pipeline splits counts for each of its units (BERT
        makes each CJK ideograph a word of its own). A script list's unit enters only when its
        count is 1 or more: a few released units in a script do not bring its whole list in at
        1 each, unless ``every_script_word`` (WordPiece, which reads a character it lacks as
        the unknown token, keeps each word's characters in the table)."""
        out = {u: float(c) for u, c in units.items() if c > 0}
        if not out:
            return out
        words = self.frequencies()
        listed = [(units_of(" " + word), f) for word, f in words]
        alphabet = {ch for u in out for ch in u} | set(
            "".join(units_of(" " + string.printable.strip())))
        total, smallest = sum(out.values()), min(out.values())
        tables = [(listed, share) if form is None
                  else ([(units_of(form(word)), f) for word, f in words], share)
                  for form, share in word_forms(out, units_of)]
        scripts = self.script_lists(out, units_of, text_of or (lambda u: u))
        own = max(0.0, 1.0 - sum(share for _, share in scripts))
        alphabet |= _new_characters([(listed, own), *scripts], alphabet, new_characters)
        if every_script_word:
            tables, scripts = tables + scripts, []
        prior: Counter = Counter()   # a word the pipeline splits counts for each of its units
        own_units: set[str] = set()   # units of tables entered at 1 or more, whatever their count
        for i, (made_of, share) in enumerate(tables + scripts):
            for made, f in made_of:
                if alphabet.issuperset("".join(made)):
                    for unit in made:
                        prior[unit] += f * share
                        if i < len(tables):
                            own_units.add(unit)
        usage = usage_ratio({u: f * total for u, f in prior.items()}, out, smallest)
        for unit, f in prior.items():
            if unit not in out:
                count = usage * min(smallest, f * total)
                # a script list enters at its share of the release: a few released units
                # in a script must not bring its whole list in at count 1 each
                if count >= 1.0 or unit in own_units:
                    out[unit] = max(1.0, count)
        return out

    def script_lists(self, released: Mapping[str, float], units_of, text_of) -> list[tuple]:
        """For each script of ``SCRIPT_LANGUAGES`` whose letters the released units hold
        (other than the prior's own language's): the first ``SCRIPT_WORDS`` words of that
        language's wordfreq list, as units (after a space, or alone for languages written
        without spaces), with the script's share of the released letter units' DP counts.
        A corpus written partly in another script gets pieces of that script from public
        text, as much as the release says it is written in it. Post-processing."""
        letters = 0.0
        mass: dict[str, float] = {}
        for unit, count in released.items():
            text = text_of(unit)
            if count <= 0 or not any(ch.isalpha() for ch in text):
                continue
            letters += count
            for lang in script_languages([text]) - {self.lang}:
                mass[lang] = mass.get(lang, 0.0) + count
        out = []
        for lang in sorted(mass):
            freq = _first_words(lang, SCRIPT_WORDS)
            lead = "" if lang in UNSPACED_LANGUAGES else " "
            out.append(([(units_of(lead + w), f) for w, f in freq], mass[lang] / letters))
        return out


# A listed unit predicted at USAGE_FROM times the smallest released count or more would be
# released, its count known to within 1/USAGE_FROM, if the corpus used it as the list does
USAGE_FROM = 8.0
USAGE_UNITS = 100


def usage_ratio(predicted: Mapping[str, float], released: Mapping[str, float],
                smallest: float) -> float:
    """How the corpus uses the public list's words next to the list: the median, over the
    listed units predicted at ``USAGE_FROM`` times the ``smallest`` released count or more, of
    the released DP count over the prediction (0 for a unit not released), at most 1; 1 when
    fewer than ``USAGE_UNITS`` units are predicted that high. A corpus of everyday English
    releases nearly all of them, at about their predicted counts (about 1); package summaries
    or code write most English words far less often than the list predicts (0.1 to 0.4), and
    their tail is not the list's words, so the prior's counts are scaled by it. Post-processing
    of the release and the public list."""
    ratios = [released.get(u, 0.0) / p for u, p in predicted.items()
              if p >= USAGE_FROM * smallest]
    if len(ratios) < USAGE_UNITS:
        return 1.0
    return min(1.0, statistics.median(ratios))


# Scripts (the first word of a letter's Unicode name) and the wordfreq list that stands for
# each: public facts. Chinese and Japanese are written without spaces between words.
SCRIPT_LANGUAGES = {"CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko",
                    "CYRILLIC": "ru", "ARABIC": "ar", "HEBREW": "he", "GREEK": "el",
                    "DEVANAGARI": "hi"}
UNSPACED_LANGUAGES = frozenset({"zh", "ja"})
SCRIPT_WORDS = 50_000
# the share of public words with a character the prior leaves out of the alphabet: 1 in 100,000
UNCOVERED = 1e-5


@functools.lru_cache(maxsize=16)
def _first_words(lang: str, n: int) -> tuple[tuple[str, float], ...]:
    """wordfreq's list for ``lang``: its ``n`` most frequent words, ties in word order (read
    and sorted once per process: every export reads it for the table and the model card)."""
    import wordfreq
    return tuple(_most_first(wordfreq.get_frequency_dict(lang))[:n])


def _new_characters(lists, alphabet: set[str], most: int) -> set[str]:
    """Characters outside ``alphabet`` by their expected frequency in text written as the
    release is (the frequencies of the listed words holding one, at their list's share of the
    letter units), the fewest that leave under ``UNCOVERED`` of that text's words with a
    character outside the alphabet, and at most ``most`` (each takes vocabulary places)."""
    weight: Counter = Counter()
    missing = []
    for made_of, share in lists:
        for made, f in made_of:
            chars = set("".join(made)) - alphabet
            missing.append((chars, f * share))
            for ch in chars:
                weight[ch] += f * share
    order = [ch for ch, _ in _most_first(weight)[:max(0, most)]]
    rank = {ch: i for i, ch in enumerate(order)}
    covered_at: Counter = Counter()   # words covered once the first k characters are in, by k
    for chars, mass in missing:
        if chars and all(ch in rank for ch in chars):
            covered_at[1 + max(rank[ch] for ch in chars)] += mass
    total = sum(mass for _, mass in missing)
    left = sum(mass for chars, mass in missing if chars)
    k = 0
    while k < len(order) and left > UNCOVERED * total:
        k += 1
        left -= covered_at[k]
    return set(order[:k])


def _most_first(weights: Mapping[str, float]) -> list[tuple[str, float]]:
    """(key, weight) pairs by weight, largest first; ties in key order (deterministic)."""
    return sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))


def script_languages(texts) -> set[str]:
    """The languages of ``SCRIPT_LANGUAGES`` whose letters ``texts`` hold: those whose lists
    ``PublicPrior.script_lists`` may bring in for a release of those texts."""
    return {lang for text in texts for ch in text
            if ord(ch) > 0x7F and (lang := _script_language(ch)) is not None}


def _script_language(ch: str) -> str | None:
    import unicodedata
    if not ch.isalpha():
        return None
    return SCRIPT_LANGUAGES.get(unicodedata.name(ch, "").split(" ", 1)[0])


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


def word_forms(released: Mapping[str, float], units_of) -> list[tuple]:
    """The forms a public word takes in the exported pipeline, each with its share of the
    ``released`` letter units' DP counts: after a space (``None``: the prior's own " w") and,
    when the pipeline marks spaces and makes "w" unmarked (byte-level ``Ġw`` / ``w``), without
    one, as after a line break or a mark; lower-case and, when it keeps case, Capitalised and
    in CAPITALS. A unit of letters (after its marker) counts for the form it is written in;
    the shares add up to 1, so a word's public frequency is split over its forms as the
    release writes words. Only the space form, at share 1, when the release has no letter
    unit after a space. Post-processing of the release."""
    word = units_of(" a")
    if len(word) != 1 or not word[0].endswith("a"):
        return [(None, 1.0)]
    marker = word[0][:-1]
    placements = [True] + ([False] if marker and units_of("a") == ["a"] else [])
    cased = units_of(" A") != word
    cases = {"lower": str.lower, "capitalised": _capitalised, "capitals": str.upper}
    if not cased:
        cases = {"lower": str.lower}

    def form_of(unit: str) -> tuple[bool, str] | None:
        spaced = unit.startswith(marker)   # every unit, when spaces leave no mark
        letters = unit[len(marker):] if spaced else unit
        if not letters.isalpha():
            return None
        if letters.islower():
            return spaced, "lower"
        if letters == _capitalised(letters.lower()):
            return spaced, "capitalised"
        return (spaced, "capitals") if len(letters) > 1 and letters.isupper() else None
    mass = {(p, c): 0.0 for p in placements for c in cases}
    for unit, count in released.items():
        form = form_of(unit)
        if form is not None and form in mass and count > 0:
            mass[form] += float(count)
    total = sum(mass.values())
    if mass[True, "lower"] <= 0:
        return [(None, 1.0)]
    out: list[tuple] = [(None, mass[True, "lower"] / total)]
    for (spaced, case), m in mass.items():
        if m > 0 and (spaced, case) != (True, "lower"):
            out.append((lambda w, s=spaced, c=cases[case]: (" " if s else "") + c(w), m / total))
    return out


TRAILING_MARKS = (".", ",")


def _letters(unit: str) -> bool:
    """A unit of letters, after at most one marker character (Metaspace's ▁)."""
    return unit[-1:].isalpha() and sum(ch.isalpha() for ch in unit) >= len(unit) - 1


def with_punctuated_forms(units: Mapping[str, float], released: Mapping[str, float],
                          units_of) -> dict[str, float]:
    """``units`` and, when the exported pre-tokenizer keeps punctuation in a word's unit
    (Metaspace: ``▁word.``, ``▁(word``), forms the release rarely keeps, each at its share in
    the ``released`` units' DP counts, where the table lacks it:

    - each unit of letters followed by each of ``TRAILING_MARKS``, at the share of the
      released letter units with that mark over those without;
    - each unit of letters without its space marker (``word``, as read inside ``▁(word``,
      ``▁/r/word`` or a URL), at the share of the released units in which letters follow
      marks (``▁(word``, and parts such as ``-word`` or ``'s``), over the released letter units.

    A release keeps such forms only when many users share them, so the trainer saw few and
    learned no piece across a word and its mark (``s.``, ``▁career,``) nor a word's piece
    without its marker; these forms teach them, as often as the release says the corpus
    writes them. Post-processing of the release."""
    out = {u: float(c) for u, c in units.items()}
    word = units_of(" a")
    if len(word) != 1:
        return out
    marker = word[0][:-1]
    bare = sum(c for u, c in released.items() if c > 0 and _letters(u))

    def add(form_of, share: float) -> None:
        if bare <= 0 or share <= 0:
            return
        for unit, count in units.items():
            if count > 0 and _letters(unit):
                out.setdefault(form_of(unit), max(1.0, float(count) * share))

    for mark in TRAILING_MARKS:
        if units_of(" a" + mark) == [word[0] + mark]:
            marked = sum(c for u, c in released.items()
                         if c > 0 and u.endswith(mark) and _letters(u[:-len(mark)]))
            add(lambda u, m=mark: u + m, marked / bare if bare > 0 else 0.0)
    if marker and units_of(" (a") == [marker + "(a"]:
        led = sum(c for u, c in released.items() if c > 0 and _after_marks(u, marker))
        add(lambda u: u[len(marker):] if u.startswith(marker) else u,
            led / bare if bare > 0 else 0.0)
    return out


def _after_marks(unit: str, marker: str) -> bool:
    """Marks (no letter, digit or white space), then letters, after ``marker`` or not:
    ``▁(word``, or a part of a unit (``-word``, ``/word``: ``metaspace_parts``)."""
    m = re.escape(marker)
    return re.fullmatch(f"(?:{m})?" + r"[^\w\s" + m + r"]+[^\W\d_]+", unit) is not None


# Unigram's byte fallback: a character no piece covers is spelt as its UTF-8 bytes (public)
BYTE_PIECES = [f"<0x{b:02X}>" for b in range(256)]


def with_byte_pieces(pieces: list) -> list[list]:
    """A Unigram vocabulary ([piece, score] pairs) with the 256 byte pieces it lacks appended
    below every score: used only for what no other piece covers."""
    out = [[p, float(score)] for p, score in pieces]
    have = {p for p, _ in out}
    floor = min((score for _, score in out), default=0.0) - 10.0
    return out + [[b, floor] for b in BYTE_PIECES if b not in have]


# Marks a word's first symbol when a WordPiece vocabulary is learned by the BPE trainer; a
# private-use character, and units that hold it are left out
WORD_START = "\ue000"


def train_model(model: str, counts: Mapping[str, int], vocab_size: int, special_tokens: list[str],
                alphabet: list[str], unk_token: str | None, prefix: str | None = None,
                alone: frozenset[str] = frozenset()):
    """A ``tokenizers`` model of ``model`` (``"bpe"``, ``"wordpiece"``, ``"unigram"``) trained
    on ``counts`` (unit → count) towards ``vocab_size`` tokens, special tokens included, as
    JSON. ``alphabet``: characters every vocabulary holds whether or not a unit has them (for
    BPE the 256 byte-level characters). ``prefix``: WordPiece's continuing-subword prefix.
    ``alone`` (WordPiece): characters the pre-tokenizer always makes a word of their own, which
    get no continuing piece.

    The same counts always give the same model (a record is a function of the release):
    ``tokenizers``' WordPiece and Unigram trainers break ties in hash order, so both are
    learned by the BPE trainer, whose ties follow sorted symbols (``_wordpiece``,
    ``_unigram``)."""
    if model == "bpe":
        return _bpe(counts, vocab_size, special_tokens, alphabet)
    if model == "wordpiece":
        return _wordpiece(counts, vocab_size, special_tokens, alphabet, unk_token,
                          prefix or "##", alone)
    if model == "unigram":
        return _unigram(counts, vocab_size, special_tokens, alphabet, unk_token)
    raise ValueError(f"no trainer for model {model!r}")


def _wordpiece(counts, vocab_size, special_tokens, alphabet, unk_token, prefix,
               alone: frozenset[str] = frozenset()) -> dict:
    """WordPiece as its own trainer makes it (BPE merges; a piece inside a word carries
    ``prefix``), from the BPE trainer on units marked at their start: a learned token with the
    mark begins a word, one without continues it. A character of ``alone`` never continues a
    word: its continuing piece, which the trainer holds as one of its characters, is dropped and
    its place goes to one more merge."""
    marked = {WORD_START + u: c for u, c in counts.items() if WORD_START not in u}
    symbols = set(alphabet) | {ch for u in marked for ch in u}
    dead = {ch for ch in alone if ch in symbols and ch not in special_tokens}
    bpe = _bpe(marked, vocab_size + 1 + len(dead), special_tokens,
               sorted(set(alphabet) | {WORD_START}))
    vocab: dict[str, int] = {}
    for token in sorted(bpe["vocab"], key=bpe["vocab"].__getitem__):
        if token == WORD_START or token in dead:
            continue
        piece = token if token in special_tokens else (
            token[1:] if token.startswith(WORD_START) else prefix + token)
        vocab.setdefault(piece, len(vocab))
    vocab = _with_every_character(vocab, alphabet, set(special_tokens), vocab_size, prefix,
                                  alone)
    return {"type": "WordPiece", "unk_token": unk_token, "continuing_subword_prefix": prefix,
            "vocab": vocab}


def _with_every_character(vocab: dict[str, int], alphabet, special: set[str], size: int,
                          prefix: str, alone: frozenset[str] = frozenset()) -> dict[str, int]:
    """Every character of ``alphabet`` both as a word's start and as a continuation
    (WordPiece reads a whole word as unknown when one of its characters has no piece), within
    ``size``: the last-learned pieces make room. A character of ``alone`` only starts words."""
    missing = [p for ch in alphabet for p in ((ch,) if ch in alone else (ch, prefix + ch))
               if p not in vocab]
    if not missing:
        return vocab
    tokens = sorted(vocab, key=vocab.__getitem__)
    removable = [i for i in range(len(tokens) - 1, -1, -1)
                 if tokens[i] not in special and len(tokens[i].removeprefix(prefix)) > 1]
    drop = set(removable[:max(0, len(tokens) + len(missing) - size)])
    kept = [t for i, t in enumerate(tokens) if i not in drop] + missing
    return {t: i for i, t in enumerate(kept)}


def _unigram(counts, vocab_size, special_tokens, alphabet, unk_token) -> dict:
    """A Unigram model whose pieces are the vocabulary the BPE trainer learns from the same
    table, each scored by the log of its share of the pieces in BPE's segmentation of the
    table (the model then reads text by Viterbi over these scores).

    ``tokenizers``' Unigram trainer seeds its pieces from substrings of the distinct words it
    reads and prunes them by EM: on a table of released units (few distinct words around a
    frequent piece, and none of the long tail) it keeps whole released units and splits the
    rest into characters. BPE's merges build every piece from two smaller ones, so the tail's
    words still find sub-word pieces. A piece BPE never outputs (a step towards a longer
    one) gets a score below every output piece."""
    import math
    from tokenizers import Tokenizer, models, pre_tokenizers

    bpe = _bpe(counts, vocab_size, special_tokens, alphabet)
    segmenter = Tokenizer(models.BPE(bpe["vocab"], bpe_merges(bpe)))
    segmenter.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    used: Counter = Counter()
    units = [u for u, c in counts.items() if c > 0]
    for i in range(0, len(units), 10_000):
        chunk = units[i:i + 10_000]
        for unit, encoding in zip(chunk, segmenter.encode_batch(chunk)):
            for piece in encoding.tokens:
                used[piece] += counts[unit]
    total = max(1, sum(used.values()))
    floor = round(math.log(0.5 / total), 6)
    specials = list(special_tokens) + (
        [unk_token] if unk_token is not None and unk_token not in special_tokens else [])
    scored = sorted(((p, round(math.log(used[p] / total), 6) if used[p] else floor)
                     for p in bpe["vocab"] if p not in specials), key=lambda ps: (-ps[1], ps[0]))
    return {"type": "Unigram", "byte_fallback": False,
            "unk_id": None if unk_token is None else specials.index(unk_token),
            "vocab": [[t, 0.0] for t in specials] + [[p, sc] for p, sc in scored]}


def _bpe(counts, vocab_size: int, special_tokens, alphabet) -> dict:
    """``tokenizers``' BPE trainer on the table (its ties follow sorted symbols)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                  initial_alphabet=alphabet, show_progress=False)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(_batches(counts), trainer=trainer)
    return json.loads(tok.to_str())["model"]


def bpe_merges(trained: dict) -> list[tuple[str, str]]:
    """A trained BPE model's merges as pairs, from either of ``tokenizers``' JSON forms."""
    pairs = [m.split(" ", 1) if isinstance(m, str) else m for m in trained["merges"]]
    return [(a, b) for a, b in pairs]


__all__ = ["BYTE_PIECES", "PublicPrior", "bpe_merges", "count_floor", "script_languages", "train_model",
           "training_counts", "with_byte_pieces", "with_punctuated_forms"]
