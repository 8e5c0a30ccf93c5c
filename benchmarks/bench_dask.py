"""Local vs Dask on the PyPI summaries corpus (842k users, one document each).

    python benchmarks/bench_dask.py [--corpus PATH] [--workers 2] [--mechanism weighted_gaussian]
                                    [--repeat 1]

Prints, for each backend: load (read + tokenize + group by user) time, release time, the released
size, and peak RSS (driver; for Dask also the largest worker), then the ratio Dask / local end to
end (load + release; the goal on one machine: at most 1.5x). Each run is a fresh process
(first-call costs included, as in a real run). The clock starts at ``load``: process start and
imports are outside it for both, the LocalCluster's start (its workers import dp-vocab then)
for Dask. ``--repeat N`` runs N local/Dask pairs back to
back and prints the median ratio: on a shared machine one pair is noisy. Both extract
columnar: Dask runs the local extraction on each input file in a worker. A real cluster: set
``[run] backend = "dask"`` and ``scheduler_address = "tls://host:8786"`` with ``tls_ca_file``,
``tls_cert``, ``tls_key`` in a recipe (a tcp:// scheduler needs
``send_private_data_unencrypted = true``), or the same as ``--run.KEY VALUE`` overrides.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def measure(backend_name: str, corpus: Path, workers: int, mechanism: str) -> None:
    from dp_vocab import make_mechanism
    from dp_vocab.backends import make_backend
    from dp_vocab.ingest.corpora import JsonlReader
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer

    backend = make_backend({"backend": backend_name, "n_workers": workers})
    try:
        t = time.perf_counter()
        data = backend.load(JsonlReader(corpus), ItemExtractor(RegexTokenizer()))
        load = time.perf_counter() - t
        mech = make_mechanism(mechanism, epsilon=3.0, delta=1e-5, max_items_per_user=100)
        t = time.perf_counter()
        rel = mech.release(data)
        release = time.perf_counter() - t
        worker_rss = ""
        if backend_name == "dask":
            per = backend.client.run(rss_gb)
            worker_rss = f", largest worker peak RSS {max(per.values()):.2f} GB"
        print(f"{backend_name:5s} {mechanism}: load {load:6.1f} s, release {release:6.2f} s, "
              f"{len(rel):,} released, driver peak RSS {rss_gb():.2f} GB{worker_rss}", flush=True)
        print(f"RESULT {backend_name} {mechanism} {load + release:.3f}", flush=True)
    finally:
        backend.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "pypi_summaries.jsonl.gz")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mechanism", default="weighted_gaussian")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--backend", choices=["local", "dask"])
    args = ap.parse_args()
    if args.backend:
        measure(args.backend, args.corpus, args.workers, args.mechanism)
        return
    print(f"{os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for mech in dict.fromkeys((args.mechanism, "policy_gaussian")):
        ratios = []
        for _ in range(args.repeat):
            totals: dict = {}
            for backend in ("local", "dask"):  # separate processes: separate peak RSS
                out = subprocess.run([sys.executable, __file__, "--backend", backend,
                                      "--corpus", str(args.corpus), "--workers",
                                      str(args.workers), "--mechanism", mech], check=True,
                                     capture_output=True, text=True).stdout
                for line in out.splitlines():
                    if line.startswith("RESULT "):
                        _, name, _, total = line.split()
                        totals[name] = float(total)
                    else:
                        print(line, flush=True)
            ratios.append(totals["dask"] / totals["local"])
            print(f"{mech}: dask / local end to end (load + release) = {ratios[-1]:.2f}x",
                  flush=True)
        if args.repeat > 1:
            print(f"{mech}: median of {args.repeat} pairs = {statistics.median(ratios):.2f}x "
                  f"(load average now {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
