"""Private tokenizers as their users judge them: tokens per held-out word next to the tokenizer
trained without privacy.

    python benchmarks/bench_tokenizers.py [--corpus PATH] [--models bpe,wordpiece,unigram]
                                          [--epsilons 1,3] [--vocab-size 32000] [--holdout 0.2]
                                          [--set items.lowercase=true ...]

Users are split by a public hash of their id (``dp_vocab.research.heldout.is_held_out``): the shipped
recipe (``recipes/private-MODEL.cfg``) runs on the training users at ``--budget.epsilon E`` and
``--export.vocab_size V``; the baseline is the exported tokenizer's own pipeline (normaliser,
pre-tokenizer, special tokens, model type) with its model trained by ``tokenizers``' trainer on
the training users' raw text, at the size the private one reached and at V. Both are scored on
the held-out users' text: tokens per word (words: ``heldout.WORD_PATTERN``; special tokens not
added) and unknown tokens per word. Every number here is NON-PRIVATE (raw text, no noise): for
benchmarking on our public dev corpora only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
SHARED = HERE.parent.parent / "shared" / "corpora"


def load(path: Path, holdout: float):
    import polars as pl
    from dp_vocab.research.heldout import is_held_out
    df = pl.read_ndjson(path, schema={"user": pl.Utf8, "text": pl.Utf8}).drop_nulls()
    held = {u: is_held_out(u, holdout) for u in df["user"].unique().to_list()}
    mask = df["user"].replace_strict(held, return_dtype=pl.Boolean)
    return df.filter(~mask), df.filter(mask)["text"].to_list()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--models", default="bpe,wordpiece,unigram")
    ap.add_argument("--epsilons", default="3,1")
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=None, help="seeded runs (experiments only)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a recipe override, e.g. items.lowercase=true (repeatable)")
    args = ap.parse_args()

    from tokenizers import Tokenizer
    from dp_vocab import run_recipe
    from dp_vocab.research.heldout import BaselineFailed, nonprivate_tokenizer, tokenizer_scores
    from dp_vocab.ingest.corpora.bundled import PRESETS

    from dp_vocab.recipes import parse_override_value
    overrides = {k: parse_override_value(v) for k, v in (a.split("=", 1) for a in args.set)}
    t = time.perf_counter()
    train, held = load(args.corpus, args.holdout)
    texts = train["text"].to_list()
    print(f"# {args.corpus.name}: {train['user'].n_unique():,} training users "
          f"({len(texts):,} documents), {len(held):,} held-out documents; "
          f"split in {time.perf_counter() - t:.0f} s", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        train_path = Path(tmp) / "train.jsonl"
        train.write_ndjson(train_path)
        for model in args.models.split(","):
            recipe = PRESETS / f"private-{model}.cfg"
            baseline_at: dict[int, dict] = {}
            for eps in [float(e) for e in args.epsilons.split(",")]:
                t = time.perf_counter()
                result = run_recipe(str(recipe), Path(tmp) / f"{model}-{eps}", force=True,
                                    overrides={"paths.corpus": str(train_path),
                                               "budget.epsilon": eps,
                                               "export.vocab_size": args.vocab_size,
                                               "run.seed": args.seed, **overrides})
                run_s = time.perf_counter() - t
                private = Tokenizer.from_file(str(result.output / "hf" / "tokenizer.json"))
                size = private.get_vocab_size()
                scores = tokenizer_scores(private, held)
                for v in {size, args.vocab_size}:
                    if v not in baseline_at:
                        t = time.perf_counter()
                        try:
                            base = nonprivate_tokenizer(private, texts, v)
                            baseline_at[v] = {**tokenizer_scores(base, held),
                                              "size": base.get_vocab_size(),
                                              "seconds": time.perf_counter() - t}
                        except BaselineFailed as e:   # printed as nan
                            print(f"# {e}", flush=True)
                            nan = float("nan")
                            baseline_at[v] = {"tokens_per_word": nan, "unknown_rate": nan,
                                              "size": v, "seconds": nan}
                same, full = baseline_at[size], baseline_at[args.vocab_size]
                row = {"model": model, "epsilon": eps, "size": size,
                       "private": scores["tokens_per_word"],
                       "private_unk": scores["unknown_rate"],
                       "np_same": same["tokens_per_word"], "np_same_unk": same["unknown_rate"],
                       "np_full": full["tokens_per_word"], "np_full_unk": full["unknown_rate"],
                       "run_s": run_s, "np_s": full["seconds"]}
                rows.append(row)
                print(f"{model:9} ε={eps:g}: size {size:,} of {args.vocab_size:,}; tokens/word "
                      f"{row['private']:.4f} (unk {100 * row['private_unk']:.3f}%) | "
                      f"non-private same size {row['np_same']:.4f} "
                      f"(×{row['private'] / row['np_same']:.4f}, unk "
                      f"{100 * row['np_same_unk']:.3f}%) | non-private {args.vocab_size:,} "
                      f"{row['np_full']:.4f} (×{row['private'] / row['np_full']:.4f}) | "
                      f"run {run_s:.0f} s, non-private training {row['np_s']:.0f} s",
                      flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
