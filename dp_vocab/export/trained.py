"""Tokenizer models trained by ``tokenizers``' own trainers on a DP count table.

A BPE, WordPiece or Unigram trainer reads a corpus only through its pre-tokenizer's word counts.
Given the released units (the words the exported pre-tokenizer makes) and their DP counts, the
trainer sees the table it would have counted from the raw text, with noise, clipping and without
the units no DP release keeps. Everything here is post-processing of the release and of public
inputs (the byte alphabet, the public list the mechanism used).
"""

from __future__ import annotations

import json
import re
import string
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


class PublicPrior:
    """Public word frequencies that fill the training table below the released units: the
    trainers then learn pieces for words no DP release keeps (names, rare inflections) from
    public text statistics instead of not at all. ``"wordfreq:LANG"``: wordfreq's list.

    A listed word w that is not released enters as the units the exported pipeline makes of
    " w" (one unit only), with count min(m, f_w · T): f_w its public frequency, T the released
    units' total count and m their smallest count, so a public word never outweighs a
    released one. Public data and the release only: post-processing."""

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
        import wordfreq
        freq = wordfreq.get_frequency_dict(self.lang)
        return sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:self.words]

    def describe(self) -> dict:
        """Public facts for the model card: the list, its version and digest."""
        import hashlib
        from importlib.metadata import version
        h = hashlib.sha256()
        for w, f in self.frequencies():
            h.update(f"{w}\t{f!r}\n".encode("utf-8", "surrogatepass"))
        return {"source": f"{self.source} (wordfreq {version('wordfreq')}; the trainer's "
                          f"prior)",
                "items": self.words, "sha256": h.hexdigest()}

    def fill(self, units: Mapping[str, float], units_of) -> dict[str, float]:
        """``units`` with the listed words that are not released, made of characters the
        released units (or printable ASCII) already hold: a list's rare scripts would otherwise
        take vocabulary places as alphabet."""
        out = {u: float(c) for u, c in units.items() if c > 0}
        if not out:
            return out
        alphabet = {ch for u in out for ch in u} | set(
            "".join(units_of(" " + string.printable.strip())))
        total, smallest = sum(out.values()), min(out.values())
        for word, f in self.frequencies():
            made = units_of(" " + word)
            if len(made) == 1 and made[0] not in out and alphabet.issuperset(made[0]):
                out[made[0]] = min(smallest, max(1.0, f * total))
        return out


def train_model(model: str, counts: Mapping[str, int], vocab_size: int, special_tokens: list[str],
                alphabet: list[str], unk_token: str | None, prefix: str | None = None):
    """A ``tokenizers`` model of ``model`` (``"bpe"``, ``"wordpiece"``, ``"unigram"``) trained
    on ``counts`` (unit → count) towards ``vocab_size`` tokens, special tokens included.
    ``alphabet``: characters every vocabulary holds whether or not a unit has them (for BPE the
    256 byte-level characters). ``prefix``: WordPiece's continuing-subword prefix (``##``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    trainer: trainers.Trainer
    empty: models.Model
    if model == "bpe":
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                      initial_alphabet=alphabet, show_progress=False)
        empty = models.BPE()
    elif model == "wordpiece":
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                            initial_alphabet=alphabet,
                                            continuing_subword_prefix=prefix or "##",
                                            show_progress=False)
        empty = models.WordPiece(unk_token=unk_token or "[UNK]")
    elif model == "unigram":
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                          initial_alphabet=alphabet, unk_token=unk_token,
                                          show_progress=False)
        empty = models.Unigram()
    else:
        raise ValueError(f"no trainer for model {model!r}")
    tok = Tokenizer(empty)
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(_batches(counts), trainer=trainer)
    return json.loads(tok.to_str())["model"]


__all__ = ["PublicPrior", "train_model", "training_counts"]
