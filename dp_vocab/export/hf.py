"""Hugging Face ``tokenizers`` export: WordLevel, WordPiece, BPE and Unigram ``tokenizer.json``.

The normaliser and pre-tokenizer match what extracted the items (NFKC, lower-casing, the same
regex or HF pre-tokenizer), so the tokenizer sees text the way the vocabulary was built. Every
vocabulary entry is a declared special token, a released item, or a piece of released items
(their characters for WordPiece/Unigram; BPE merges learned from released items only).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import ParameterError
from ..release import Release

MODELS = ("wordlevel", "wordpiece", "bpe", "unigram")
DEFAULT_SPECIAL = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def _normalizer(items: dict):
    from tokenizers import normalizers
    steps = []
    if items.get("nfkc", True):
        steps.append(normalizers.NFKC())
    if items.get("lowercase", True):
        steps.append(normalizers.Lowercase())
    return normalizers.Sequence(steps) if steps else None


def _pre_tokenizer(items: dict):
    from tokenizers import Regex, pre_tokenizers
    kind = items.get("tokenizer")
    if kind == "regex":
        return pre_tokenizers.Sequence([
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Split(Regex(items["pattern"]), behavior="isolated")])
    if kind == "hf_pre_tokenizer":
        return {"whitespace": pre_tokenizers.Whitespace,
                "whitespace_split": pre_tokenizers.WhitespaceSplit,
                "bert": pre_tokenizers.BertPreTokenizer,
                "byte_level": lambda: pre_tokenizers.ByteLevel(add_prefix_space=False),
                "metaspace": pre_tokenizers.Metaspace}[items["kind"]]()
    # spaCy's rules have no HF equivalent: BERT's split on whitespace and punctuation is closest
    return pre_tokenizers.BertPreTokenizer()


def _alphabet(words) -> list[str]:
    return sorted({ch for w in words for ch in w})


class HFTokenizerExporter:
    """Writes ``hf/tokenizer.json`` (and ``vocab.txt`` or ``vocab.json`` + ``merges.txt`` with
    ``classic_files``). BPE and Unigram need DP counts (a [counts] section or noisy_counts)."""

    name = "dp_vocab.hf_tokenizer.v1"

    def __init__(self, model: str = "wordpiece", special_tokens: list[str] | None = None,
                 vocab_size: int = 30000, classic_files: bool = False,
                 max_training_words: int = 2_000_000):
        if model not in MODELS:
            raise ParameterError("export.model", model, "one of " + ", ".join(MODELS))
        self.model = model
        self.special_tokens = list(DEFAULT_SPECIAL if special_tokens is None else special_tokens)
        if not self.special_tokens or not all(isinstance(t, str) and t for t in self.special_tokens):
            raise ParameterError("export.special_tokens", special_tokens,
                                 "a non-empty list of strings, the first being the unknown token")
        self.unk = self.special_tokens[0]
        self.vocab_size = int(vocab_size)
        self.classic_files = bool(classic_files)
        self.max_training_words = int(max_training_words)

    @property
    def needs_counts(self) -> bool:
        return self.model in ("bpe", "unigram")

    def build(self, release: Release, items: dict):
        from tokenizers import Tokenizer, decoders, models

        words = [w for w in release.items if w not in self.special_tokens]
        if self.model == "wordlevel":
            vocab = {t: i for i, t in enumerate(self.special_tokens + words)}
            tok = Tokenizer(models.WordLevel(vocab, unk_token=self.unk))
        elif self.model == "wordpiece":
            pieces = self.special_tokens + words
            have = set(pieces)
            for ch in _alphabet(words):
                for p in (ch, "##" + ch):
                    if p not in have:
                        pieces.append(p)
                        have.add(p)
            tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(pieces)},
                                             unk_token=self.unk, max_input_chars_per_word=100))
            tok.decoder = decoders.WordPiece()
        elif self.model == "unigram":
            counts = release.counts
            total = sum(max(counts.get(w, 0), 0) + 1 for w in words)
            scored = [(w, math.log((max(counts.get(w, 0), 0) + 1) / total)) for w in words]
            floor = min((s for _, s in scored), default=0.0) - 1.0
            vocab = [(t, 0.0) for t in self.special_tokens] + scored
            have = {t for t, _ in vocab}
            vocab += [(ch, floor) for ch in _alphabet(words) if ch not in have]
            tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
        else:
            tok = self._train_bpe(release, words, items)
        tok.normalizer = _normalizer(items)
        tok.pre_tokenizer = _pre_tokenizer(items)
        if self.model == "bpe":
            tok.decoder = decoders.BPEDecoder()
        return tok

    def _train_bpe(self, release: Release, words: list[str], items: dict):
        from tokenizers import Tokenizer, models, trainers

        tok = Tokenizer(models.BPE(unk_token=self.unk))
        tok.pre_tokenizer = _pre_tokenizer(items)
        counts = {w: max(release.counts.get(w, 0), 0) for w in words}
        total = sum(counts.values()) or 1
        scale = min(1.0, self.max_training_words / total)  # scaled DP counts: seconds, not minutes
        trainer = trainers.BpeTrainer(vocab_size=self.vocab_size, special_tokens=self.special_tokens,
                                      initial_alphabet=_alphabet(words), show_progress=False)

        def batches(size=1000):
            batch = []
            for w in words:
                batch.append(" ".join([w] * max(1, round(counts[w] * scale))))
                if len(batch) == size:
                    yield batch
                    batch = []
            if batch:
                yield batch

        tok.train_from_iterator(batches(), trainer=trainer)
        return tok

    def export(self, release: Release, outdir: Path, context: dict | None = None) -> list[str]:
        items = (context or {}).get("items", {"tokenizer": "regex", "nfkc": True,
                                              "lowercase": True,
                                              "pattern": r"\w+(?:['’]\w+)*|[^\w\s]"})
        if self.needs_counts and release.counts is None:
            raise ParameterError("export.model", self.model, "a release with DP counts",
                                 "Add a [counts] section or set mechanism.noisy_counts = true.")
        tok = self.build(release, items)
        out = Path(outdir) / "hf"
        out.mkdir(exist_ok=True)
        tok.save(str(out / "tokenizer.json"))
        written = ["hf/tokenizer.json"]
        if self.classic_files and self.model in ("wordpiece", "bpe", "wordlevel"):
            written += [f"hf/{Path(f).name}" for f in tok.model.save(str(out))]
        return written
