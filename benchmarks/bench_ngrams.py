"""Reply-suggestion n-grams on the full Reddit corpus: DPNE against the published DPNE code.

    python benchmarks/bench_ngrams.py [--corpus PATH] [--epsilon 3] [--delta 1e-5] [--seed 1]

Per level n: released n-grams, true ones (occurring somewhere in the corpus) and non-corpus ones
(released zero-weight candidates that occur nowhere), for the reply-ngrams recipe before
issue 16 (weighted levels, 10 per user per level, "top") and for the reply-ngrams recipe now,
with the published DPNE code's true n-grams as the reference row. Run time per release; peak
RSS of each release is measured in a fresh subprocess (``--one NAME`` runs one configuration).

BENCHMARK ONLY: the true/non-corpus split reads the private corpus. It is never part of a
release or of anything dp-vocab writes.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dp_vocab import make_mechanism
from dp_vocab.ingest.corpora import JsonlReader
from dp_vocab.ingest.extract import extract_sequences
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.recipes import load_recipe
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import RegexTokenizer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora"
RECIPE = Path(__file__).resolve().parents[1] / "dp_vocab" / "recipes" / "presets" / "reply-ngrams.cfg"
# The published DPNE code (Spark, its defaults: 1,000 n-grams per user per level, η = 0.01,
# uniform split) on reddit_college, ε = 3, δ = 1e-5, the project's regex tokens: true n-grams
PUBLISHED = [4378, 11531, 12341, 8473, 4639]
BEFORE = dict(max_n=5, max_items_per_user=10, sampling="top", eta=0.01, budget_split="uniform")


def recipe_params() -> dict:
    """The mechanism block of recipes/reply-ngrams.cfg (without @mechanisms, ε, δ)."""
    cfg = load_recipe(RECIPE)["mechanism"]
    return {k: v for k, v in cfg.items() if k not in ("epsilon", "delta")}


def occurring(corpus, grams: list[str], n: int) -> int:
    """How many of these length-n n-grams occur somewhere in the corpus (NON-PRIVATE)."""
    if not grams:
        return 0
    vocab = corpus.vocab
    ids = np.array([[vocab.get(t, -1) for t in g.split(corpus.joiner)] for g in grams],
                   dtype=np.int64)
    ids = ids[(ids >= 0).all(axis=1)]
    toks = corpus.tokens.astype(np.uint64)
    m = toks.size - n + 1
    if m <= 0 or not ids.size:
        return 0
    mult = np.uint64(0x9E3779B97F4A7C15)
    h = np.zeros(m, dtype=np.uint64)
    want = np.zeros(ids.shape[0], dtype=np.uint64)
    for j in range(n):   # a polynomial hash of the n tokens from each position
        h = h * mult + toks[j:j + m]
        want = want * mult + ids[:, j].astype(np.uint64)
    seq_end = np.repeat(corpus.seq_ptr[1:], np.diff(corpus.seq_ptr))[:m]
    pos = np.flatnonzero(np.isin(h, want) & (np.arange(m) + n <= seq_end))
    found = {tuple(corpus.tokens[p:p + n].tolist()) for p in pos.tolist()}
    return sum(tuple(r) in found for r in ids.tolist())


def run(corpus, name: str, params: dict, epsilon: float, delta: float, seed: int) -> dict:
    params = dict(params)
    name_of = params.pop("@mechanisms", "dpne")
    mech = make_mechanism(name_of, epsilon=epsilon, delta=delta, **params)
    mech = mech.for_extractor(ItemExtractor(RegexTokenizer()))   # a public list, as a run does
    t = time.perf_counter()
    rel = mech.release(corpus, random=RandomSource(seed))
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # before the counting below
    by_n: dict[int, list[str]] = {}
    for g in rel.items:
        by_n.setdefault(len(g.split(corpus.joiner)), []).append(g)
    released = [len(by_n.get(n, [])) for n in range(1, mech.max_n + 1)]
    true = [occurring(corpus, by_n.get(n, []), n) for n in range(1, mech.max_n + 1)]
    return {"name": name, "released": released, "true": true, "seconds": seconds,
            "peak_rss_gb": peak / 1024 ** 2}


def load(path: Path):
    return extract_sequences(JsonlReader(path), ItemExtractor(RegexTokenizer()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--one", choices=("before", "recipe"), help="run one configuration "
                    "(a subprocess of this script: prints one JSON line with its peak RSS)")
    args = ap.parse_args()
    configs = {"before": BEFORE, "recipe": recipe_params()}
    if args.one:
        corpus = load(args.corpus)
        loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = run(corpus, args.one, configs[args.one], args.epsilon, args.delta, args.seed)
        out["after_load_gb"] = loaded / 1024 ** 2
        print(json.dumps(out))
        return
    rows = []
    for name in configs:
        cmd = [sys.executable, __file__, "--one", name, "--corpus", str(args.corpus),
               "--epsilon", str(args.epsilon), "--delta", str(args.delta),
               "--seed", str(args.seed)]
        rows.append(json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout.strip().splitlines()[-1]))
        print(f"{name}: {configs[name]}", flush=True)
    print(f"\nreddit_college, ε={args.epsilon:g}, δ={args.delta:g}, seed {args.seed}; "
          "true = occurs in the corpus (NON-PRIVATE, benchmark only)")
    head = "| run | " + " | ".join(f"n={n} rel/true/non-corpus" for n in range(1, 6)) + \
        " | true total | × published | non-corpus % | release s | peak RSS GB |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    pub = sum(PUBLISHED)
    print("| published DPNE code | " + " | ".join(f"–/{t:,}/–" for t in PUBLISHED)
          + f" | {pub:,} | 1.00 | – | ~600 (Spark) | – |")
    for r in rows:
        cells = [f"{a:,}/{b:,}/{a - b:,}" for a, b in zip(r["released"], r["true"])]
        cells += [""] * (5 - len(cells))
        tot, true = sum(r["released"]), sum(r["true"])
        print(f"| {r['name']} | " + " | ".join(cells) + f" | {true:,} | {true / pub:.2f} | "
              f"{100 * (tot - true) / max(tot, 1):.2f} | {r['seconds']:.1f} | "
              f"{r['peak_rss_gb']:.2f} |")
    worst = [min(b / p for b, p in zip(r["true"], PUBLISHED)) for r in rows]
    print("lowest level ratio to published: " + ", ".join(
        f"{r['name']} {w:.2f}" for r, w in zip(rows, worst)))


if __name__ == "__main__":
    main()
