"""`dp-vocab run` end to end against a bare polars pipeline, in the same run.

    python benchmarks/bench_end_to_end.py [--corpora reddit pypi] [--repeat 1]
        [--recipe dp_vocab/recipes/presets/quickstart.cfg]

For each corpus, alternately (so machine load hits both alike), each in its own subprocess:

* ``dp-vocab run RECIPE --paths.corpus CORPUS`` through ``recipes.run_recipe`` (what the CLI
  calls), timed from interpreter start to the process's end (which ends as the command's);
* the bare pipeline: read the JSONL with polars, NFKC + lower-case, the same regex, drop tokens
  over 50 characters, distinct (user, token) pairs as integer ids — nothing else.

Prints wall and CPU times (user + system), the run's extraction and release stages (wall),
the ratios run / bare and each subprocess's peak RSS. On a busy machine the CPU ratio is the
steadier one. The corpora are public benchmark data (../shared/corpora), so printing their
statistics here is fine. The machine may be shared: compare ratios within one run, not times
across runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "corpora"
CORPORA = {"reddit": SHARED / "reddit_college.jsonl.gz", "pypi": SHARED / "pypi_summaries.jsonl.gz"}

BARE = r'''
import gzip, sys, polars as pl
path = sys.argv[1]
df = pl.read_ndjson(gzip.open(path).read() if path.endswith(".gz") else path)
pairs = (df.lazy()
         .select("user", pl.col("text").str.normalize("NFKC").str.to_lowercase()
                 .str.extract_all(r"\w+(?:['’]\w+)*|[^\w\s]").alias("tok"))
         .explode("tok").filter(pl.col("tok").str.len_chars() <= 50)
         .select(pl.col("user").cast(pl.Categorical).to_physical(),
                 pl.col("tok").cast(pl.Categorical).to_physical())
         .unique().collect())
print(pairs.height)
'''

RUN = r'''
import sys
from dp_vocab.cli import tune_process
from dp_vocab.recipes import run_recipe
tune_process()   # as the dp-vocab command does (dp_vocab.cli.command)
result = run_recipe(sys.argv[1], sys.argv[2], overrides={"paths.corpus": sys.argv[3]},
                    force=True)
print(len(result.release.items), result.timings["extract_s"], result.timings["release_s"])
import gc
gc.freeze()   # and ends as the dp-vocab command does (dp_vocab.cli.command)
'''


def timed(code: str, *args: str) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS GB of the child, its stdout) of
    ``python -c code args``."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=HERE.parent)
    wall = time.perf_counter() - t
    if proc.returncode:
        sys.exit(proc.stderr)
    # the largest child so far: children run one at a time, so read it right after each run
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024 ** 2, \
        proc.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    ap.add_argument("--recipe", default=str(HERE.parent / "dp_vocab" / "recipes" / "presets" / "quickstart.cfg"))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.corpora:
            corpus = str(CORPORA[name])
            for _ in range(args.repeat):
                # RUSAGE_CHILDREN is a maximum over all children: measure each in a fresh
                # helper so each peak is its own
                bare = json.loads(subprocess.run(
                    [sys.executable, __file__, "--one", "bare", corpus], capture_output=True,
                    text=True, check=True).stdout)
                run = json.loads(subprocess.run(
                    [sys.executable, __file__, "--one", "run", corpus, args.recipe,
                     str(Path(tmp) / "out")], capture_output=True, text=True,
                    check=True).stdout)
                items, extract, release = run["out"].split()
                print(f"{name:7s} dp-vocab run {run['wall']:6.1f} s wall, {run['cpu']:6.1f} s CPU"
                      f" (extract {float(extract):.1f} s, release {float(release):.1f} s wall; "
                      f"peak RSS {run['rss']:.2f} GB, {items} items released) | bare "
                      f"polars {bare['wall']:6.1f} s wall, {bare['cpu']:6.1f} s CPU (peak RSS "
                      f"{bare['rss']:.2f} GB, {bare['out']} pairs) | ratio wall "
                      f"{run['wall'] / bare['wall']:.2f}x, CPU {run['cpu'] / bare['cpu']:.2f}x",
                      flush=True)


def one(kind: str, corpus: str, recipe: str = "", out: str = "") -> None:
    if kind == "bare":
        wall, cpu, rss, stdout = timed(BARE, corpus)
    else:
        wall, cpu, rss, stdout = timed(RUN, recipe, out, corpus)
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "out": stdout}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(*sys.argv[2:])
    else:
        main()
