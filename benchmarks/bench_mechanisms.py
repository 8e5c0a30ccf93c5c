"""Mechanism benchmark: our compiled/vectorised histograms vs a plain-Python dict implementation.

    python benchmarks/bench_mechanisms.py [--corpus PATH] [--mechanisms a,b] [--epsilon 3]
                                          [--delta e^-10] [--max-items 100] [--repeats 1]

For each mechanism, in one run on the same ItemSets: histogram time (order + bound + weights) of
dp-vocab and of the reference (dicts and Python loops, the style of the papers' code), their ratio,
the full release time, and the released size of both (the reference releases with float noise,
which is fine for an experiment). Public benchmark corpus, so statistics may be printed.
"""

from __future__ import annotations

import argparse
import hmac
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from reference_impl import (greedy_fixed_order_user, l1_descent_user,  # noqa: E402
                            l2_descent_user)

SHARED = HERE.parent.parent / "shared" / "corpora"
ALL = ["count_laplace", "count_gaussian", "weighted_laplace", "weighted_gaussian",
       "policy_laplace", "policy_gaussian", "gw", "gw_kt", "partition_optimal"]


def reference_histogram(name, mech, users: dict[str, Counter], key: bytes, public: dict | None):
    """Plain Python: HMAC order, per-user random.sample / priority cap, dict histogram."""
    order = sorted(users, key=lambda u: hmac.digest(key, u.encode(), "sha256"))
    d0, rng = mech.max_items_per_user, random.Random(0)
    hist: dict[str, float] = {}
    gamma = getattr(mech, "cutoff", None)
    for uid in order:
        counts = users[uid]
        if name in ("gw", "gw_kt"):
            if name == "gw":
                ordered = sorted(counts, key=lambda w: (-counts[w], w))
            else:
                ordered = sorted(counts, key=lambda w: (-public.get(w, -1.0), -counts[w], w))
            items = ordered[:d0]
            for w in items:
                hist.setdefault(w, 0.0)
            greedy_fixed_order_user(hist, items, gamma)
            continue
        items = list(counts)
        if len(items) > d0:
            items = rng.sample(items, d0)
        if name in ("count_laplace", "count_gaussian", "partition_optimal"):
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0
        elif name == "weighted_laplace":
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0 / len(items)
        elif name == "weighted_gaussian":
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0 / math.sqrt(len(items))
        elif name == "policy_laplace":
            l1_descent_user(hist, items, gamma)
        elif name == "policy_gaussian":
            l2_descent_user(hist, items, gamma)
    return hist


def reference_update(name, mech, bounded, strings, n_items: int) -> float:
    """Seconds for the Python update loop over the *same* order and bounded sets as ours."""
    rows = [[strings[i] for i in bounded.items[bounded.indptr[r]:bounded.indptr[r + 1]].tolist()]
            for r in bounded.order.tolist()]
    gamma = getattr(mech, "cutoff", None)
    hist: dict[str, float] = {}
    t = time.perf_counter()
    for items in rows:
        if name in ("gw", "gw_kt"):
            greedy_fixed_order_user(hist, items, gamma)
        elif name == "policy_laplace":
            l1_descent_user(hist, items, gamma)
        elif name == "policy_gaussian":
            l2_descent_user(hist, items, gamma)
        elif name == "weighted_gaussian":
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0 / math.sqrt(len(items))
        elif name == "weighted_laplace":
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0 / len(items)
        else:
            for w in items:
                hist[w] = hist.get(w, 0.0) + 1.0
    return time.perf_counter() - t


def reference_release(mech, hist: dict, rng: np.random.Generator) -> int:
    keys = list(hist)
    w = np.array([hist[k] for k in keys])
    if mech.noise == "laplace":
        return int((w + rng.laplace(0, mech.noise_scale, w.size) > mech.threshold).sum())
    if mech.noise == "gaussian":
        return int((w + rng.normal(0, mech.noise_scale, w.size) > mech.threshold).sum())
    p = mech.release_probability(w)
    return int((rng.random(w.size) < p).sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--public", type=Path, default=SHARED / "public_wordfreq_en.tsv.gz")
    ap.add_argument("--mechanisms", default=",".join(ALL))
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=math.exp(-10))
    ap.add_argument("--max-items", type=int, default=100)
    ap.add_argument("--no-reference", action="store_true", help="only time dp-vocab")
    args = ap.parse_args()

    from dp_vocab import make_mechanism
    from dp_vocab.ingest.corpora import JsonlReader
    from dp_vocab.ingest.extract import extract_itemsets
    from dp_vocab.mechanisms import load_public_frequencies
    from dp_vocab.privacy.noise import RandomSource
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer

    t0 = time.perf_counter()
    itemsets = extract_itemsets(JsonlReader(args.corpus), ItemExtractor(RegexTokenizer()))
    print(f"extracted {itemsets.n_users:,} users, {itemsets.n_pairs:,} (user, item) pairs in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    public = load_public_frequencies(args.public)
    users = None if args.no_reference else {
        str(u): Counter(dict(zip((itemsets.vocab[int(i)] for i in itemsets.row(r)[0]),
                                 itemsets.row(r)[1].tolist())))
        for r, u in enumerate(itemsets.user_ids)}

    key = b"benchmark-key-0123456789abcdef!!"
    print(f"\nε={args.epsilon:g} δ={args.delta:.3g} Δ0={args.max_items}")
    print("hist = order + bound + weights; update = the weights stage alone on the same order and\n"
          "bounded sets; release = hist + exact Bernoulli decisions; ref = plain-Python dicts\n")
    print(f"{'mechanism':18s} {'ours hist':>10s} {'ref hist':>9s} {'ratio':>6s} "
          f"{'ours upd':>9s} {'ref upd':>8s} {'ratio':>6s} {'release':>8s} {'released':>9s} "
          f"{'ref released':>12s}")
    for name in args.mechanisms.split(","):
        kw = dict(epsilon=args.epsilon, delta=args.delta, max_items_per_user=args.max_items)
        if name == "gw_kt":
            kw["public_frequencies"] = public
        mech = make_mechanism(name, **kw)
        mech.histogram(itemsets.select_rows([0]), key)  # compile outside the timing
        t = time.perf_counter()
        mech._histogram(itemsets, key)
        ours = time.perf_counter() - t
        t = time.perf_counter()
        rel = mech.release(itemsets, random=RandomSource())
        full = time.perf_counter() - t
        if users is None:
            print(f"{name:18s} {ours:9.3f}s {'':>9s} {'':>6s} {'':>9s} {'':>8s} {'':>6s} "
                  f"{full:7.2f}s {len(rel):9,d}")
            continue
        bounded = mech.bounded_sets(itemsets, key)
        t = time.perf_counter()
        mech._weights(bounded, len(itemsets.vocab))
        ours_upd = time.perf_counter() - t
        ref_upd = reference_update(name, mech, bounded, itemsets.vocab.strings, len(itemsets.vocab))
        t = time.perf_counter()
        hist = reference_histogram(name, mech, users, key, public)
        ref = time.perf_counter() - t
        ref_size = reference_release(mech, hist, np.random.default_rng())
        print(f"{name:18s} {ours:9.3f}s {ref:8.2f}s {ref / ours:5.0f}x {ours_upd:8.4f}s "
              f"{ref_upd:7.2f}s {ref_upd / ours_upd:5.0f}x {full:7.2f}s {len(rel):9,d} "
              f"{ref_size:12,d}", flush=True)


if __name__ == "__main__":
    main()
