"""What a released vocabulary is worth to its users, measured on users it never saw. NON-PRIVATE.

Every number here is computed from raw data without noise: for the data owner's ``evaluate``
harness only, never for ``dp-vocab run`` or its outputs.

- ``split_users``: a fixed public split of users (a hash of the user id), so every mechanism is
  trained on the same users and measured on the same held-out ones;
- ``VocabularyUtility``: for one released set, its true items (held by a training user) and false
  positives (held by none), the share of held-out token occurrences it covers, and the tokens per
  word of the tokenizer dp-vocab exports for it (BERT-style WordPiece) next to a non-private one of
  the same size: the same exporter over the training split's most frequent items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .bounding.user_order import encode_user_id
from .itemsets import ItemSets

NON_PRIVATE = "NON-PRIVATE"
SPLIT_LABEL = b"dp_vocab.heldout.split.v1"


def split_users(itemsets: ItemSets, holdout: float) -> tuple[ItemSets, ItemSets]:
    """(training users, held-out users): a user is held out when a public hash of its id falls
    below ``holdout`` (the same split on every run and every machine)."""
    scale = float(1 << 64)
    held = [int.from_bytes(hashlib.sha256(SPLIT_LABEL + encode_user_id(u)).digest()[:8], "big")
            / scale < holdout for u in itemsets.user_ids]
    rows = np.arange(itemsets.n_users)
    mask = np.array(held, dtype=bool)
    return itemsets.select_rows(rows[~mask].tolist()), itemsets.select_rows(rows[mask].tolist())


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
        from .export.hf import HFTokenizerExporter
        from .release import Release
        release = Release(items=sorted(vocabulary), mechanism="heldout", params={}, epsilon=0.0,
                          delta=0.0, randomness={}, privacy={})
        tok = HFTokenizerExporter(model="wordpiece", style="bert").build(release, self.items)
        strings = self.train.vocab.strings
        words = [strings[i] for i in self._heldout_words.tolist()]
        lengths = np.array([len(e.ids) for e in tok.encode_batch(words, add_special_tokens=False)],
                           dtype=np.float64)
        freq = self._heldout_freq[self._heldout_words]
        return float((lengths * freq).sum() / freq.sum()) if freq.sum() else float("nan")


__all__ = ["NON_PRIVATE", "VocabularyUtility", "split_users"]
