"""Tokenizer export benchmark: every preset (BERT WordLevel/WordPiece, GPT-2 byte-level BPE,
SentencePiece/T5 Unigram) from a 200k-word DP histogram.

    python benchmarks/bench_export.py [--words 200000] [--bpe-vocab 30000]

The histogram is the public English word-frequency list (../shared/corpora) with counts scaled to
a corpus of ~10^8 tokens, standing in for a released vocabulary with DP counts.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path

from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.data.release import Release
from dp_vocab.ingest.text.tokenizers import DEFAULT_PATTERN

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=200_000)
    ap.add_argument("--bpe-vocab", type=int, default=30_000)
    args = ap.parse_args()
    counts = {}
    with gzip.open(SHARED / "public_wordfreq_en.tsv.gz", "rt", encoding="utf-8") as f:
        for line in f:
            w, freq = line.rstrip("\n").split("\t")
            w = w.lower()
            if w and w not in counts:
                counts[w] = max(1, round(float(freq) * 1e8))
            if len(counts) == args.words:
                break
    rel = Release(items=sorted(counts), mechanism="bench", params={}, epsilon=1, delta=1e-5,
                  randomness={}, privacy={}, counts=counts)
    items = {"tokenizer": "regex", "pattern": DEFAULT_PATTERN, "nfkc": True, "lowercase": True}
    print(f"{len(counts):,} words, {sum(counts.values()):,} total count")
    for model, style in (("wordlevel", "bert"), ("wordpiece", "bert"), ("unigram", "sentencepiece"),
                         ("unigram", "t5"), ("bpe", "gpt2")):
        exp = HFTokenizerExporter(model=model, style=style,
                                  vocab_size=args.bpe_vocab if model == "bpe" else None)
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            exp.export(rel, Path(tmp), {"items": items})
            dt = time.perf_counter() - t
            from tokenizers import Tokenizer
            size = Tokenizer.from_file(str(Path(tmp) / "hf" / "tokenizer.json")).get_vocab_size()
        print(f"{model:10s} {style:14s} {dt:6.2f} s  vocab {size:,}")


if __name__ == "__main__":
    main()
