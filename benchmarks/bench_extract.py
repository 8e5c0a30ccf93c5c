"""Read + tokenize + intern benchmark: corpus → ItemSets, tokens/s, wall time, peak RSS.

    python benchmarks/bench_extract.py [--corpus PATH] [--tokenizer regex|spacy|hf] [--limit N]

Each tokenizer is measured in its own process (peak RSS is per process). Reads public benchmark
corpora from ../shared/corpora, so printing corpus statistics here is fine.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent.parent / "shared" / "corpora" / "reddit_college.jsonl.gz"


def measure(corpus: Path, tokenizer: str, limit: int | None) -> None:
    from dp_vocab.ingest.corpora import JsonlReader
    from dp_vocab.ingest.extract import extract_itemsets
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import HFPreTokenizer, RegexTokenizer, SpacyTokenizer

    tok = {"regex": RegexTokenizer, "spacy": lambda: SpacyTokenizer("en"),
           "hf": lambda: HFPreTokenizer("whitespace")}[tokenizer]()
    extractor = ItemExtractor(tok)
    n_tokens = 0

    def counting(text):
        nonlocal n_tokens
        items = extractor(text)
        n_tokens += len(items)
        return items

    docs = JsonlReader(corpus)
    if limit:
        docs = islice(docs, limit)
    t0 = time.perf_counter()
    itemsets = extract_itemsets(docs, counting)
    wall = time.perf_counter() - t0
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(f"{tokenizer:6s} docs={'all' if not limit else limit:>7} tokens={n_tokens:,} "
          f"users={itemsets.n_users:,} pairs={itemsets.n_pairs:,} vocab={len(itemsets.vocab):,} "
          f"wall={wall:.1f}s rate={n_tokens / wall / 1e6:.2f} Mtok/s peak_rss={rss_gb:.2f} GB",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT)
    ap.add_argument("--tokenizer", choices=["regex", "spacy", "hf"])
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    if args.tokenizer:
        measure(args.corpus, args.tokenizer, args.limit)
        return
    # all three, each in a fresh process; spaCy and HF on the first 100k documents
    for tok, limit in (("regex", None), ("hf", 100_000), ("spacy", 100_000)):
        cmd = [sys.executable, __file__, "--corpus", str(args.corpus), "--tokenizer", tok]
        if limit:
            cmd += ["--limit", str(limit)]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
