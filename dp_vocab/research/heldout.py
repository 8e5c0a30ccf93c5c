"""What a released vocabulary is worth to its users, measured on users it never saw. NON-PRIVATE.

Every number here is computed from raw data without noise: for the data owner's ``evaluate``
harness only, never for ``dp-vocab run`` or its outputs.

- ``split_users``: a fixed public split of users (a hash of the user id), so every mechanism is
  trained on the same users and measured on the same held-out ones;
- ``ngram_coverage``: for n-gram releases, the share of held-out n-gram occurrences of each
  length covered, and how often a held-out reply's next word is suggested;
- ``VocabularyUtility``: for one released set, its true items (held by a training user) and false
  positives (held by none), the share of held-out token occurrences it covers, and the tokens per
  word of the tokenizer dp-vocab exports for it (BERT-style WordPiece) next to a non-private one of
  the same size: the same exporter over the training split's most frequent items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..bounding.user_order import encode_user_id
from ..data.itemsets import ItemSets

NON_PRIVATE = "NON-PRIVATE"
SPLIT_LABEL = b"dp_vocab.research.heldout.split.v1"


def is_held_out(user_id, holdout: float) -> bool:
    """Whether a public hash of the user id falls below ``holdout`` (the same split on every
    run and every machine)."""
    digest = hashlib.sha256(SPLIT_LABEL + encode_user_id(user_id)).digest()
    return int.from_bytes(digest[:8], "big") / float(1 << 64) < holdout


def split_users(data, holdout: float):
    """(training users, held-out users) of item sets or token sequences (``is_held_out``, for
    item sets and sequences alike)."""
    held = [u for u in data.user_ids if is_held_out(u, holdout)]
    held_set = set(held)
    return data.without_users(held), data.without_users(
        [u for u in data.user_ids if u not in held_set])


@dataclass
class VocabularyUtility:
    """NON-PRIVATE measures of released vocabularies against a training and a held-out split."""

    train: ItemSets
    heldout: ItemSets
    items: dict           # the extractor's description (normaliser, pre-tokenizer)

    def __post_init__(self) -> None:
        n = len(self.train.vocab)
        self._train_held = np.bincount(self.train.items, minlength=n) > 0
        self._train_freq = np.bincount(self.train.items, weights=self.train.counts, minlength=n)
        self._heldout_freq = np.bincount(self.heldout.items, weights=self.heldout.counts,
                                         minlength=n)
        self._heldout_words = np.flatnonzero(self._heldout_freq > 0)

    def _ids(self, released: list[str]) -> np.ndarray:
        get = self.train.vocab.get
        return np.array([i for i in (get(w) for w in released) if i is not None], dtype=np.int64)

    def measure(self, released: list[str], tokenizers: bool = True) -> dict:
        """true_items, false_positives, heldout_coverage and (``tokenizers``) tokens per word of
        the exported tokenizer and of the non-private one of the same size."""
        ids = self._ids(released)
        true = int(self._train_held[ids].sum()) if ids.size else 0
        total = self._heldout_freq.sum()
        covered = self._heldout_freq[ids].sum() if ids.size else 0.0
        out = {"true_items": true, "false_positives": len(released) - true,
               "heldout_coverage": float(covered / total) if total else float("nan")}
        if tokenizers:
            out["tokens_per_word"] = self.tokens_per_word(released)
            top = np.argsort(-self._train_freq, kind="stable")[:len(released)]
            top = top[self._train_freq[top] > 0]
            strings = self.train.vocab.strings
            out["tokens_per_word_nonprivate"] = self.tokens_per_word(
                [strings[i] for i in top.tolist()])
        return out

    def tokens_per_word(self, vocabulary: list[str]) -> float:
        """Mean tokens per held-out word occurrence under the BERT-style WordPiece export."""
        from ..export.hf import HFTokenizerExporter
        from ..data.release import Release
        release = Release(items=sorted(vocabulary), mechanism="heldout", params={}, epsilon=0.0,
                          delta=0.0, randomness={}, privacy={})
        tok = HFTokenizerExporter(model="wordpiece", style="bert").build(release, self.items)
        strings = self.train.vocab.strings
        words = [strings[i] for i in self._heldout_words.tolist()]
        lengths = np.array([len(e.ids) for e in tok.encode_batch(words, add_special_tokens=False)],
                           dtype=np.float64)
        freq = self._heldout_freq[self._heldout_words]
        return float((lengths * freq).sum() / freq.sum()) if freq.sum() else float("nan")


# ---- tokenizers, as their users judge them ---------------------------------------------------

# words of held-out text, the unit of "tokens per word" (also in the README)
WORD_PATTERN = r"\w+(?:['’]\w+)*|[^\w\s]"


def tokenizer_scores(tokenizer, texts: list[str]) -> dict:
    """NON-PRIVATE: ``tokens_per_word`` (tokens of the texts, special tokens not added, per
    word of ``WORD_PATTERN``) and ``unknown_rate`` (unknown tokens per word) of a ``tokenizers``
    ``Tokenizer`` on held-out texts."""
    import re
    words = sum(len(re.findall(WORD_PATTERN, t)) for t in texts)
    unk = _unk_id(tokenizer)
    tokens = unknown = 0
    for start in range(0, len(texts), 10_000):
        for e in tokenizer.encode_batch(texts[start:start + 10_000], add_special_tokens=False):
            tokens += len(e.ids)
            if unk is not None:
                unknown += e.ids.count(unk)
    return {"tokens_per_word": tokens / words if words else float("nan"),
            "unknown_rate": unknown / words if words else float("nan")}


def _unk_id(tokenizer) -> int | None:
    import json
    model = json.loads(tokenizer.to_str())["model"]
    if model.get("type") == "Unigram":
        return model.get("unk_id")
    token = model.get("unk_token")
    return None if token is None else tokenizer.token_to_id(token)


class BaselineFailed(RuntimeError):
    """``tokenizers``' own trainer stopped on the text: no non-private tokenizer to compare."""


def nonprivate_tokenizer(tokenizer, texts, vocab_size: int):
    """NON-PRIVATE: the tokenizer a user would train without privacy: ``tokenizer``'s pipeline
    (normaliser, pre-tokenizer, decoder, post-processor, special tokens, model type) with its
    model trained by ``tokenizers``' own trainer on the raw ``texts`` towards ``vocab_size``.
    Raises ``BaselineFailed`` when that trainer stops (its Unigram trainer panics with "likelihood
    is NAN" on some source code)."""
    import json
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    spec = json.loads(tokenizer.to_str())
    kind = spec["model"]["type"]
    special = [t["content"] for t in spec.get("added_tokens", []) if t.get("special")]
    byte_level = "ByteLevel" in json.dumps(spec.get("pre_tokenizer"))
    alphabet = pre_tokenizers.ByteLevel.alphabet() if byte_level else []
    model: models.Model
    trainer: trainers.Trainer
    if kind == "BPE":
        model, trainer = models.BPE(), trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=special, initial_alphabet=alphabet,
            show_progress=False)
    elif kind == "WordPiece":
        unk = spec["model"]["unk_token"]
        model, trainer = models.WordPiece(unk_token=unk), trainers.WordPieceTrainer(
            vocab_size=vocab_size, special_tokens=special, initial_alphabet=alphabet,
            show_progress=False)
    elif kind == "Unigram":
        unk_id = spec["model"].get("unk_id")
        unk = None if unk_id is None else spec["model"]["vocab"][unk_id][0]
        model, trainer = models.Unigram(), trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=special, unk_token=unk,
            initial_alphabet=alphabet, show_progress=False)
    else:
        raise ValueError(f"no trainer for a {kind} model")
    out = Tokenizer(model)
    for part in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
        setattr(out, part, getattr(tokenizer, part))
    try:
        out.train_from_iterator(texts, trainer=trainer, length=len(texts))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:   # a panic in the Rust trainer is a BaseException
        raise BaselineFailed(f"tokenizers' {kind} trainer stopped on the training users' text "
                             f"({type(e).__name__}), so there is no non-private {kind} "
                             f"tokenizer to compare with") from None
    return out


# ---- n-grams for reply suggestion ----------------------------------------------------------------

def _position_hashes(tokens: np.ndarray, n: int) -> np.ndarray:
    """A 64-bit polynomial hash of the n tokens from each position (wrapping arithmetic)."""
    m = tokens.size - n + 1
    h = np.zeros(max(m, 0), dtype=np.uint64)
    for j in range(n):
        h = h * np.uint64(0x9E3779B97F4A7C15) + tokens[j:j + m].astype(np.uint64)
    return h


def ngram_coverage(items, held_out, max_n: int = 5) -> dict:
    """NON-PRIVATE (evaluate only): on held-out users' token sequences,

    - ``coverage_n{n}``: the share of n-gram occurrences (positions inside a sequence) whose
      n-gram is released, for n = 1..max_n;
    - ``next_word_suggested``: the share of words after the first of a sequence that some
      released n-gram (n ≥ 2) suggests: its prefix ends the text before the word, and its last
      token is the word.
    """
    joiner, vocab = held_out.joiner, held_out.vocab
    by_n: dict[int, set] = {}
    for g in items:
        toks = g.split(joiner)
        ids = tuple(vocab.get(t, -1) for t in toks)
        if len(toks) <= max_n and min(ids) >= 0:
            by_n.setdefault(len(toks), set()).add(ids)
    tokens = held_out.tokens
    seq_end = np.repeat(held_out.seq_ptr[1:], np.diff(held_out.seq_ptr))
    seq_start = np.repeat(held_out.seq_ptr[:-1], np.diff(held_out.seq_ptr))
    suggested = np.zeros(tokens.size, dtype=bool)
    out = {}
    for n in range(1, max_n + 1):
        m = tokens.size - n + 1
        inside = (np.arange(max(m, 0)) + n <= seq_end[:max(m, 0)])
        released = np.zeros(max(m, 0), dtype=bool)
        grams = by_n.get(n, set())
        if grams and m > 0:
            want = np.zeros(len(grams), dtype=np.uint64)
            for j in range(n):
                want = want * np.uint64(0x9E3779B97F4A7C15) + np.array(
                    [g[j] for g in grams], dtype=np.uint64)
            cand = np.flatnonzero(np.isin(_position_hashes(tokens, n), want) & inside)
            released[cand] = [tuple(tokens[p:p + n].tolist()) in grams for p in cand.tolist()]
        total = int(inside.sum())
        out[f"coverage_n{n}"] = float(released.sum() / total) if total else 0.0
        if n >= 2:   # the n-gram starting at p suggests the word at p + n − 1
            suggested[np.flatnonzero(released) + n - 1] = True
    words = np.arange(tokens.size) > seq_start   # not the first word of its sequence
    out["next_word_suggested"] = float(suggested[words].mean()) if words.any() else 0.0
    return out


def nonprivate_same_size(train, sizes) -> list[str]:
    """NON-PRIVATE (evaluate and benchmarks only): per level n = 1, 2, …, the ``sizes[n − 1]``
    n-grams of the training sequences held by the most users, ties by more occurrences, then
    by the first position (an n-gram inside one sequence; identified by the 64-bit hash of
    ``_position_hashes``). The n-gram set a reply-suggestion team would ship without privacy,
    as large as the release per level."""
    tokens = train.tokens
    pos_user = np.repeat(train.seq_user, np.diff(train.seq_ptr)).astype(np.int64)
    seq_end = np.repeat(train.seq_ptr[1:], np.diff(train.seq_ptr))
    strings = train.vocab.strings
    out: list[str] = []
    for n, k in enumerate(sizes, 1):
        m = tokens.size - n + 1
        if k <= 0 or m <= 0:
            continue
        ok = np.flatnonzero(np.arange(m) + n <= seq_end[:m])
        h = _position_hashes(tokens, n)[ok]
        users = pos_user[ok]
        order = np.lexsort((ok, users, h))         # by n-gram, then user, then position
        hs, us = h[order], users[order]
        new_gram = np.ones(hs.size, dtype=bool)
        new_gram[1:] = hs[1:] != hs[:-1]
        new_pair = new_gram.copy()
        new_pair[1:] |= us[1:] != us[:-1]
        starts = np.flatnonzero(new_gram)
        gram_of = np.cumsum(new_gram) - 1
        holders = np.bincount(gram_of[new_pair], minlength=starts.size)
        occurrences = np.diff(np.append(starts, hs.size))
        first = ok[order[starts]]
        top = np.lexsort((first, -occurrences, -holders))[:k]
        out += [train.joiner.join(strings[t] for t in tokens[p:p + n].tolist())
                for p in first[top].tolist()]
    return out


__all__ = ["BaselineFailed", "NON_PRIVATE", "VocabularyUtility", "WORD_PATTERN", "is_held_out",
           "ngram_coverage", "nonprivate_same_size", "nonprivate_tokenizer", "split_users", "tokenizer_scores"]
