"""Release-stage benchmark: compiled histogram vs plain-Python references, and compile cost.

    python benchmarks/bench_release.py [--corpus PATH] [--epsilon 3] [--delta e^-10]
                                       [--max-items 100] [--repeats 5]

In one run:
  1. compile cost: a small Policy Gaussian / Weighted Gaussian / DP-SIPS release in a fresh
     process with an empty numba cache (cold: everything compiles), then again with the cache
     it left (warm: what every later run pays); then a Policy Gaussian release above the
     threads threshold (2M pairs: the threaded bounding kernel compiles on the first such
     input);
  2. the corpus, loaded once with ``extract_itemsets``;
  3. the Policy Gaussian histogram (user order + bounding + L2 descent + candidates) after a
     warm-up, best and median of ``--repeats``, wall and CPU seconds, and CPU seconds per
     stage, against two plain-Python references, and the ratios:
     - the same algorithm: HMAC-SHA256 per user (its order and its seed), the Δ0 items of
       smallest keyed hash (BLAKE2b under the user's seed) as the user's sample, the
       per-user L2-descent loop over a dict, and the candidates in item-hash order. Like
       ours, its sample is a function of the key, the user id and the item strings
       (mechanisms/README.md §2), so it hashes every item of a user over Δ0 (10.0M of
       Reddit's 12.9M pairs);
     - a cheaper one, which does less than ours: ``random.sample`` touches ~Δ0 of a large
       user's items (a sample that is not a function of the key and the user's data), and
       there is no candidate list;
     both start from per-user dicts built before the clock starts;
  4. full release times (histogram + exact Bernoulli decisions) of Policy Gaussian, Weighted
     Gaussian and DP-SIPS.
The machine's load average is printed beside the times: other processes on the same cores
inflate wall times (CPU seconds less so). Public benchmark corpus, so statistics may be printed.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import hmac
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_mechanisms import reference_histogram  # noqa: E402
from reference_impl import l2_descent_user  # noqa: E402  (tests/, on the path it set)

SHARED = HERE.parent.parent / "shared" / "corpora"
KEY = b"benchmark-key-0123456789abcdef!!"

_FIRST_RUN = """
import time
t0 = time.perf_counter()
from dp_vocab import ItemSets, make_mechanism
from dp_vocab.privacy.noise import RandomSource
t1 = time.perf_counter()
its = ItemSets.from_user_items([(f"u{i}", [f"w{j}" for j in range(i % 9 + 1)])
                               for i in range(300)])
for name in ("policy_gaussian", "weighted_gaussian", "dp_sips"):
    make_mechanism(name, epsilon=3.0, delta=1e-5, max_items_per_user=4).release(
        its, random=RandomSource(seed=1))
t2 = time.perf_counter()
from dp_vocab.bounding._kernels import _PARALLEL_FROM
n_big = _PARALLEL_FROM // 150 * 11 // 10   # 150.5 items a row: 10% over the threads' limit
big = ItemSets.from_user_items([(f"u{i}", [f"w{(7 * i + j) % 5000}" for j in range(i % 300 + 1)])
                                for i in range(n_big)])
t3 = time.perf_counter()
make_mechanism("policy_gaussian", epsilon=3.0, delta=1e-5, max_items_per_user=40).release(
    big, random=RandomSource(seed=1))
print(f"{t1 - t0:.2f} {t2 - t1:.2f} {time.perf_counter() - t3:.2f}")
"""


def first_run_seconds(cache_dir: str) -> tuple[float, float, float]:
    """(import seconds, seconds of the first small releases, of the first large one) in a
    fresh process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _FIRST_RUN], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def timed(f, repeats: int) -> tuple[float, float, float]:
    """(best wall, median wall, best CPU) seconds of ``f()`` over ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(wall), float(np.median(wall)), min(cpu)


def stages(policy, itemsets, repeats: int) -> list[tuple[str, float]]:
    """CPU seconds of each stage of the in-memory Policy Gaussian histogram, as
    ``Mechanism._histogram`` runs them."""
    import dp_vocab.bounding as b
    from dp_vocab.bounding import _kernels

    vocab, bounding = itemsets.vocab, policy.bounding
    hashes, ties = vocab.hashes(), vocab.ties()
    words, seeds = b.user_keys(itemsets.user_ids, KEY)
    bounded = b.bound_sets(itemsets.indptr, itemsets.items, itemsets.counts, vocab.strings, hashes,
                      ties, (words, seeds), bounding)
    weights = policy._weights(bounded, len(vocab))
    cand = np.flatnonzero(weights > 0)
    work = {
        "user order (SipHash + sort)": lambda: b.keyed_order(
            b.user_keys(itemsets.user_ids, KEY)[0]),
        "caps": lambda: _kernels.bound_rows(
            itemsets.indptr, itemsets.items, itemsets.counts, seeds, hashes, ties,
            bounding.ranks(vocab.strings), bounding.max_items, int(bounding.priority),
            bounding.ordered),
        "L2 descent": lambda: policy._weights(bounded, len(vocab)),
        "candidates in hash order + strings": lambda: [
            vocab.strings[i] for i in cand[b.canonical_order(hashes[cand])].tolist()],
    }
    return [(stage, timed(f, repeats)[2]) for stage, f in work.items()]


def keyed_reference(policy, users: dict, key: bytes) -> list[str]:
    """The Policy Gaussian histogram's algorithm in plain Python (see the module docstring):
    the candidates, in item-hash order."""
    d0, gamma = policy.max_items_per_user, policy.cutoff
    digests = {u: hmac.digest(key, u.encode(), "sha256") for u in users}   # order | seed
    hist: dict[str, float] = {}
    for uid in sorted(users, key=lambda u: digests[u][:16]):
        items = list(users[uid])
        if len(items) > d0:
            seed = digests[uid][16:]
            items = heapq.nsmallest(d0, items, key=lambda w: hashlib.blake2b(
                w.encode(), key=seed, digest_size=8).digest())
        l2_descent_user(hist, items, gamma)
    return sorted((w for w, v in hist.items() if v > 0),
                  key=lambda w: hashlib.blake2b(w.encode(), digest_size=8).digest())


def load() -> str:
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "reddit_college.jsonl.gz")
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=math.exp(-10))
    ap.add_argument("--max-items", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        c = resource.getrusage(resource.RUSAGE_CHILDREN)
        imp, cold, cold_big = first_run_seconds(cache)
        c2 = resource.getrusage(resource.RUSAGE_CHILDREN)
        _, warm, warm_big = first_run_seconds(cache)
        c3 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"first small release of policy_gaussian + weighted_gaussian + dp_sips in a fresh "
          f"process (import {imp:.1f} s): cold numba cache {cold:.1f} s, warm cache "
          f"{warm:.2f} s; then a first large policy_gaussian release: cold {cold_big:.1f} s, "
          f"warm {warm_big:.2f} s; whole process CPU: cold "
          f"{c2.ru_utime + c2.ru_stime - c.ru_utime - c.ru_stime:.1f} s, warm "
          f"{c3.ru_utime + c3.ru_stime - c2.ru_utime - c2.ru_stime:.1f} s ({load()})",
          flush=True)

    from dp_vocab import make_mechanism
    from dp_vocab.ingest.corpora import JsonlReader
    from dp_vocab.ingest.extract import extract_itemsets
    from dp_vocab.privacy.noise import RandomSource
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer

    t = time.perf_counter()
    itemsets = extract_itemsets(JsonlReader(args.corpus), ItemExtractor(RegexTokenizer()))
    print(f"extracted {itemsets.n_users:,} users, {itemsets.n_pairs:,} (user, item) pairs in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    kw = dict(epsilon=args.epsilon, delta=args.delta, max_items_per_user=args.max_items)
    print(f"ε={args.epsilon:g} δ={args.delta:.3g} Δ0={args.max_items}; best / median of "
          f"{args.repeats} after a warm-up\n")

    policy = make_mechanism("policy_gaussian", **kw)
    policy.histogram(itemsets, KEY)   # warm-up: threads started, kernels loaded
    best, med, cpu = timed(lambda: policy._histogram(itemsets, KEY), args.repeats)
    print(f"policy_gaussian histogram: {best:.3f} s / {med:.3f} s wall, {cpu:.3f} s CPU "
          f"({load()})", flush=True)
    print("  CPU by stage (best of the repeats): " + ", ".join(
        f"{stage} {seconds * 1e3:.0f} ms" for stage, seconds in stages(policy, itemsets,
                                                                        args.repeats)),
          flush=True)
    users = {str(u): Counter(dict(zip((itemsets.vocab[int(i)] for i in itemsets.row(r)[0]),
                                      itemsets.row(r)[1].tolist())))
             for r, u in enumerate(itemsets.user_ids)}
    for label, reference in (
            ("plain reference, the same algorithm (HMAC per user, keyed bottom-Δ0 sample, "
             "L2 descent over a dict, candidates in hash order)",
             lambda: keyed_reference(policy, users, KEY)),
            ("cheaper plain reference (HMAC per user, random.sample, L2 descent over a dict)",
             lambda: reference_histogram("policy_gaussian", policy, users, KEY, None))):
        t, c = time.perf_counter(), time.process_time()
        reference()
        ref, ref_cpu = time.perf_counter() - t, time.process_time() - c
        print(f"{label}: {ref:.2f} s wall, {ref_cpu:.2f} s CPU ({load()})\nratio: "
              f"{ref / best:.0f}× wall (best), {ref / med:.0f}× wall (median), "
              f"{ref_cpu / cpu:.0f}× CPU\n", flush=True)

    for name in ("policy_gaussian", "weighted_gaussian", "dp_sips"):
        mech = make_mechanism(name, **kw)
        mech.release(itemsets.select_rows([0]), random=RandomSource(seed=0))   # warm-up
        sizes = []

        def release():
            sizes.append(len(mech.release(itemsets, key=KEY, random=RandomSource(seed=0))))
        best, med, cpu = timed(release, args.repeats)
        print(f"{name:18s} release: {best:.3f} s / {med:.3f} s wall, {cpu:.3f} s CPU, "
              f"{sizes[-1]:,} items ({load()})", flush=True)


if __name__ == "__main__":
    main()
