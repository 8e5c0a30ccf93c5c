"""n-gram and scalable-selection benchmark on the full Reddit corpus.

    python benchmarks/bench_ngrams.py [--corpus PATH] [--epsilon 3] [--delta 1e-5]

DPNE (recipes/reply-ngrams.cfg settings): released n-grams per level and run time. Then DP-SIPS,
Weighted Gaussian and Policy Gaussian on the unigram item sets of the same corpus, same (ε, δ, Δ0).
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from dp_vocab import make_mechanism
from dp_vocab.corpora import JsonlReader
from dp_vocab.extraction import extract_itemsets, extract_sequences
from dp_vocab.text.items import ItemExtractor
from dp_vocab.text.tokenizers import RegexTokenizer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--max-n", type=int, default=5)
    ap.add_argument("--dpne-max-items", type=int, default=10)
    ap.add_argument("--max-items", type=int, default=100)
    args = ap.parse_args()
    extractor = ItemExtractor(RegexTokenizer())

    t = time.perf_counter()
    corpus = extract_sequences(JsonlReader(args.corpus), extractor)
    print(f"token sequences: {corpus.tokens.size:,} tokens, {corpus.n_users:,} users, "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    dpne = make_mechanism("dpne", epsilon=args.epsilon, delta=args.delta, max_n=args.max_n,
                          max_items_per_user=args.dpne_max_items, sampling="top", eta=0.01)
    t = time.perf_counter()
    rel = dpne.release(corpus)
    dt = time.perf_counter() - t
    print(f"\nDPNE ε={args.epsilon:g} δ={args.delta:g} Δ0={args.dpne_max_items}/level, "
          f"T={args.max_n}: {len(rel):,} n-grams in {dt:.1f} s")
    for lv in rel.details["levels"]:
        print(f"  n={lv['n']}: {lv['released']:>7,} released")
    by_n = {}
    for g in rel.items:
        by_n.setdefault(len(g.split(" ")), []).append(g)
    for n in sorted(by_n):
        print(f"  e.g. n={n}: {', '.join(repr(g) for g in sorted(by_n[n])[:: max(1, len(by_n[n]) // 4)][:4])}")
    del corpus

    t = time.perf_counter()
    itemsets = extract_itemsets(JsonlReader(args.corpus), extractor)
    print(f"\nunigram item sets in {time.perf_counter() - t:.1f} s", flush=True)
    print(f"selection at ε={args.epsilon:g} δ={args.delta:g} Δ0={args.max_items}:")
    for name in ("weighted_gaussian", "policy_gaussian", "dp_sips"):
        m = make_mechanism(name, epsilon=args.epsilon, delta=args.delta,
                           max_items_per_user=args.max_items)
        t = time.perf_counter()
        r = m.release(itemsets)
        extra = f"  rounds {[x['released'] for x in r.details['rounds']]}" if r.details else ""
        print(f"  {name:18s} {len(r):>7,} released  {time.perf_counter() - t:5.2f} s{extra}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2:.2f} GB")


if __name__ == "__main__":
    main()
