"""Reply-suggestion n-grams on the full Reddit corpus: DPNE against the published DPNE code.

    python benchmarks/bench_ngrams.py [--corpus PATH] [--epsilon 3] [--delta 1e-5] [--seed 1]
        [--key HEX] [--configs before,recipe] [--holdout 0.2]

Per level n: released n-grams, true ones (occurring somewhere in the corpus) and the non-corpus
share (released n-grams that occur nowhere), for the reply-ngrams recipe before issue 16
(weighted levels, 10 per user per level, "top") and for the reply-ngrams recipe now, with the
published DPNE code's true n-grams on reddit_college as the fixed reference row. Run time per
release; peak RSS of each release is measured in a fresh subprocess (``--one NAME`` runs one
configuration). ``--seed S --key HEX`` gives the release of ``dp-vocab run reply-ngrams
--run.seed S --run.key HEX`` on the same corpus.

``--holdout F``: what a reply-suggestion team measures. Each configuration is released again on
the users outside a fixed public hash split (``research.heldout.split_users``), and on the
held-out F of users we report the share of words (after the first of a text) that a released
n-gram suggests from the words before it (``next_word_suggested``), next to the same share for a
NON-PRIVATE n-gram set of the same size per level (the n-grams held by the most training users,
ties by occurrences: ``heldout.nonprivate_same_size``). The published code's n-grams are not
available, only its true counts: it has no next-word number.

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
from dp_vocab.research.heldout import ngram_coverage, nonprivate_same_size, split_users
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


def mechanism(params: dict, epsilon: float, delta: float):
    params = dict(params)
    name_of = params.pop("@mechanisms", "dpne")
    mech = make_mechanism(name_of, epsilon=epsilon, delta=delta, **params)
    return mech.for_extractor(ItemExtractor(RegexTokenizer()))   # a public list, as a run does


def by_level(items: list[str], joiner: str, max_n: int) -> list[list[str]]:
    out: list[list[str]] = [[] for _ in range(max_n)]
    for g in items:
        out[len(g.split(joiner)) - 1].append(g)
    return out


def run(corpus, name: str, params: dict, epsilon: float, delta: float, seed: int,
        key: bytes | None = None, holdout: float = 0.0) -> dict:
    mech = mechanism(params, epsilon, delta)
    t, cpu = time.perf_counter(), time.process_time()
    rel = mech.release(corpus, key=key, random=RandomSource(seed))
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # before the counting below
    levels = by_level(rel.items, corpus.joiner, mech.max_n)
    released = [len(lv) for lv in levels]
    true = [occurring(corpus, lv, n) for n, lv in enumerate(levels, 1)]
    out = {"name": name, "released": released, "true": true, "seconds": seconds,
           "cpu_seconds": cpu, "peak_rss_gb": peak / 1024 ** 2}
    if holdout:   # NON-PRIVATE: released on the training users, scored on the held-out ones
        train, held = split_users(corpus, holdout)
        items = mech.release(train, key=key, random=RandomSource(seed)).items
        sizes = [len(lv) for lv in by_level(items, corpus.joiner, mech.max_n)]
        same = nonprivate_same_size(train, sizes)
        out.update(heldout_released=sizes, heldout_users=held.n_users,
                   next_word=ngram_coverage(items, held, mech.max_n)["next_word_suggested"],
                   next_word_nonprivate=ngram_coverage(same, held,
                                                       mech.max_n)["next_word_suggested"])
    return out


def load(path: Path):
    return extract_sequences(JsonlReader(path), ItemExtractor(RegexTokenizer()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--key", help="the run key, 64 hex digits (default: drawn from the seed)")
    ap.add_argument("--configs", default="before,recipe",
                    help="comma-separated configurations to run: before, recipe, recipe_eta, "
                         "recipe_unweighted, recipe_per_level")
    ap.add_argument("--holdout", type=float, default=0.0,
                    help="share of users held out for the next-word columns (NON-PRIVATE), "
                         "e.g. 0.2; 0: none")
    ap.add_argument("--one", choices=("before", "recipe", "recipe_eta", "recipe_unweighted",
                                      "recipe_per_level"),
                    help="run one configuration (a subprocess of this script: prints one JSON "
                         "line with its peak RSS)")
    args = ap.parse_args()
    # recipe_eta: the recipe with levels n ≥ 2 by the η threshold instead of BH (issue 32)
    eta_rule = {k: v for k, v in recipe_params().items()
                if k not in ("level_fdr", "level_fdr_lambda", "total_fdr", "public_fdr",
                             "level2_rank_power", "level_block_power")}
    # recipe_unweighted: the recipe's BH levels without the class weights (ngrams.md §3d)
    unweighted = {k: v for k, v in recipe_params().items()
                  if k not in ("level2_rank_power", "level_block_power")}
    # recipe_per_level: the recipe without its whole-release bound (ngrams.md §3c): level 1 at
    # dpne_public's default public_fdr, levels 2..T each at level_fdr only
    per_level = {k: v for k, v in recipe_params().items() if k not in ("public_fdr", "total_fdr")}
    configs = {"before": BEFORE, "recipe": recipe_params(), "recipe_eta": eta_rule,
               "recipe_unweighted": unweighted, "recipe_per_level": per_level}
    key = bytes.fromhex(args.key) if args.key else None
    if args.one:
        corpus = load(args.corpus)
        loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = run(corpus, args.one, configs[args.one], args.epsilon, args.delta, args.seed,
                  key, args.holdout)
        out["after_load_gb"] = loaded / 1024 ** 2
        print(json.dumps(out))
        return
    rows = []
    for name in args.configs.split(","):
        cmd = [sys.executable, __file__, "--one", name, "--corpus", str(args.corpus),
               "--epsilon", str(args.epsilon), "--delta", str(args.delta),
               "--seed", str(args.seed), "--holdout", str(args.holdout)]
        cmd += ["--key", args.key] if args.key else []
        rows.append(json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout.strip().splitlines()[-1]))
        print(f"{name}: {configs[name]}", flush=True)
    reddit = args.corpus.name.startswith("reddit_college.")   # the published reference's corpus
    print(f"\n{args.corpus.name}, ε={args.epsilon:g}, δ={args.delta:g}, seed {args.seed}"
          f"{', key ' + args.key[:8] + '…' if args.key else ''}; true = occurs in the corpus "
          "(NON-PRIVATE, benchmark only)")
    head = "| run | " + " | ".join(f"n={n} rel/true/non-corpus %" for n in range(1, 6)) + \
        " | true total | × published | non-corpus % | release s (CPU s) | peak RSS GB |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    pub = sum(PUBLISHED)
    if reddit:
        print("| published DPNE code (fixed reference) | " + " | ".join(
            f"–/{t:,}/–" for t in PUBLISHED) + f" | {pub:,} | 1.00 | – | ~600 (Spark) | – |")
    for r in rows:
        cells = [f"{a:,}/{b:,}/{100 * (a - b) / max(a, 1):.2f}"
                 for a, b in zip(r["released"], r["true"])]
        cells += [""] * (5 - len(cells))
        tot, true = sum(r["released"]), sum(r["true"])
        ratio = f"{true / pub:.3f}" if reddit else "n/a"
        print(f"| {r['name']} | " + " | ".join(cells) + f" | {true:,} | {ratio} | "
              f"{100 * (tot - true) / max(tot, 1):.2f} | {r['seconds']:.1f} "
              f"({r['cpu_seconds']:.1f}) | "
              f"{r['peak_rss_gb']:.2f} |")
    if reddit:
        worst = [min(b / p for b, p in zip(r["true"], PUBLISHED)) for r in rows]
        print("lowest level ratio to published: " + ", ".join(
            f"{r['name']} {w:.3f}" for r, w in zip(rows, worst)))
    if args.holdout:
        print(f"\nNON-PRIVATE next word suggested on {rows[0]['heldout_users']:,} held-out users "
              f"({args.holdout:g} of users; released on the others)")
        print("| run | released per level | next word suggested | NON-PRIVATE same size per "
              "level |")
        print("|---|---|---|---|")
        if reddit:
            print("| published DPNE code (fixed reference) | – | – (true counts only) | – |")
        for r in rows:
            print(f"| {r['name']} | {', '.join(f'{x:,}' for x in r['heldout_released'])} | "
                  f"{100 * r['next_word']:.2f}% | {100 * r['next_word_nonprivate']:.2f}% |")


if __name__ == "__main__":
    main()
