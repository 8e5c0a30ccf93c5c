"""Prototype (issue 32): weighted BH at DPNE level 2 with weight classes from public ranks.

    PYTHONPATH=REPO python dev-notes/32-ngram-fdr/wbh_proto.py --corpus CORPORA/x.jsonl.gz \
        --seed 7 --key abab…ab --q 0.01 --gamma 1 [--gamma 0]

Level 2's candidate set is C_2 = S_1 × S_1. Each released unigram gets a band by its public
(wordfreq) rank, decades 1–10, 11–100, …; unigrams outside the list take the band after the
list's last rank. A pair's class is (band of a, band of b); its weight is ∝ (r_a·r_b)^(−γ) with
r the band's geometric mid-rank (Zipf: frequency ∝ 1/rank, so the expected count of (a, b)
under independence is ∝ 1/(r_a·r_b)), scaled so that Σ_g w_g = |C_2|. γ = 0 is plain BH.
Weighted adaptive BH (public.md §9) with λ = ½; zero-weight candidates carried as one count
per class. Levels n ≥ 3 unchanged.

BENCHMARK ONLY: "true" reads the private corpus.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_ngrams as B  # noqa: E402
from dp_vocab.mechanisms import ngrams as NG  # noqa: E402
from dp_vocab.mechanisms.level_fdr import _log_below  # noqa: E402
from dp_vocab.mechanisms.weighted_bh import keep_with_log_probability  # noqa: E402
from dp_vocab.privacy.calibrate import round_down  # noqa: E402
from dp_vocab.privacy.noise import binomial, binomial_half, uniform_below  # noqa: E402

STATS: dict = {}


def class_bh(h, cls, sizes, wc, sigma, q, random, lam=0.5):
    """Weighted (adaptive, λ) BH over classes: held candidates with weights h > 0 in class
    cls[i]; class j has sizes[j] candidates (held ones included) of BH weight wc[j]
    (Σ sizes·wc = m). Returns (mask over held, released zero-weight count per class)."""
    h = np.asarray(h, float)
    sizes = np.asarray(sizes, np.int64)
    wc = np.asarray(wc, float)
    m = int(sizes.sum())
    held_per = np.bincount(cls, minlength=sizes.size)
    zero = sizes - held_per
    assert (zero >= 0).all()
    wmax = wc[sizes > 0].max()
    alive = np.arange(h.size)
    log_before = np.zeros(h.size)
    c_before = np.ones(sizes.size)
    pi_hat = 1.0
    cap = 1.0
    if lam is not None:
        log_now = _log_below(h, sigma, lam)
        below = keep_with_log_probability(log_now, random)
        zb = np.array([binomial_half(int(z), random) for z in zero], np.int64)
        above_w = float(wc[cls[~below]].sum()) + float((wc * (zero - zb)).sum())
        pi_hat = (wmax + above_w) / (m * (1 - lam))
        alive, log_before = alive[below], log_now[below]
        zero, c_before, cap = zb, np.full(sizes.size, lam), lam
    k = m
    steps = 0
    while alive.size + zero.sum() > 0:
        steps += 1
        c = np.array([min(cap, round_down(w * q * k / (m * pi_hat))) for w in wc])
        ca = c[cls[alive]]
        log_now = np.empty(alive.size)
        for j in np.unique(cls[alive]):   # _log_below per class (one c each)
            sel = cls[alive] == j
            log_now[sel] = _log_below(h[alive[sel]], sigma, c[j])
        del ca
        keep = keep_with_log_probability(np.minimum(log_now - log_before, 0.0), random)
        alive, log_before = alive[keep], log_now[keep]
        zero = np.array([binomial(int(z), cn / cb, random) if cn < cb else int(z)
                         for z, cn, cb in zip(zero, c, c_before)], np.int64)
        c_before = c
        left = alive.size + int(zero.sum())
        if left >= k:
            break
        k = left
    STATS["level2"] = dict(pi_hat=pi_hat, k=int(k), steps=steps, zero=int(zero.sum()),
                           c=[float(x) for x in c])
    out = np.zeros(h.size, bool)
    out[alive] = True
    return out, zero


def sample_class(join, bands_idx, a_band, b_band, k, exclude, random):
    """k distinct uniform members of class (a_band, b_band) of C_2 not in ``exclude``."""
    A, Bb = bands_idx[a_band], bands_idx[b_band]
    chosen = {}
    mS = join.m
    while len(chosen) < k:
        ra = uniform_below(len(A), 2 * (k - len(chosen)), random)
        rb = uniform_below(len(Bb), 2 * (k - len(chosen)), random)
        for x, y in zip(ra.tolist(), rb.tolist()):
            key = int(A[x]) * mS + int(Bb[y])
            if key in chosen:
                continue
            at = int(np.searchsorted(exclude, key))
            if at < exclude.size and exclude[at] == key:
                continue
            chosen[key] = join.gram_of(key)
            if len(chosen) == k:
                break
    return list(chosen.values())


def make_decide(gamma: float, band_edges: list[int]):
    orig = NG.DPNE._decide_level

    def decide(self, n, grams, w, rho, sigma, join, released_before, random):
        if n != 2 or self.level_fdr is None:
            return orig(self, n, grams, w, rho, sigma, join, released_before, random)
        index = self.domain.index
        ranks = np.array([index.get(g[0], -1) for g in join.prev], np.int64)   # 0-based
        nb = len(band_edges)   # band_edges: upper rank limits (1-based), last = the list end
        band = np.where(ranks >= 0, np.searchsorted(band_edges, ranks + 1, side="left"), nb)
        band = np.minimum(band, nb)
        lows = [1] + band_edges
        ends = band_edges + [band_edges[-1] * 10]
        mid = np.array([math.sqrt(lo * hi) for lo, hi in zip(lows, ends)])
        nbands = nb + 1
        counts = np.bincount(band, minlength=nbands)
        bands_idx = [np.flatnonzero(band == b) for b in range(nbands)]
        sizes = np.outer(counts, counts).ravel()
        raw = np.outer(mid ** -gamma, mid ** -gamma).ravel()
        m = join.size
        assert int(sizes.sum()) == m
        wc = raw * (m / float((raw * sizes).sum()))
        a, b = np.divmod(grams.keys, join.m)
        cls = band[a] * nbands + band[b]
        keep, zero = class_bh(w, cls, sizes, wc, sigma, self.level_fdr, random,
                              self.level_fdr_lambda)
        STATS["level2"].update(band_counts=counts.tolist(), weights=wc.reshape(nbands, nbands)
                               .round(3).tolist(), zero_per_class=zero.tolist())
        out = grams.take(np.flatnonzero(keep))
        excl = grams.sorted_keys()
        for j in np.flatnonzero(zero):
            out += sample_class(join, bands_idx, j // nbands, j % nbands, int(zero[j]), excl,
                                random)
        return out
    return decide


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--key", required=True)
    ap.add_argument("--q", type=float, default=0.01)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--edges", default="10,100,1000,10000,100000,320000")
    ap.add_argument("--plain", action="store_true", help="no weighting patch (plain BH)")
    args = ap.parse_args()
    edges = [int(x) for x in args.edges.split(",")]
    if not args.plain:
        NG.DPNE._decide_level = make_decide(args.gamma, edges)
    params = B.recipe_params()
    params["level_fdr"] = args.q
    corpus = B.load(args.corpus)
    t = time.process_time()
    out = B.run(corpus, "wbh", params, 3.0, 1e-5, args.seed, bytes.fromhex(args.key))
    out["q"], out["gamma"], out["edges"], out["plain"] = args.q, args.gamma, edges, args.plain
    out["stats"] = STATS
    out["total_cpu"] = time.process_time() - t
    rel, tr = out["released"], out["true"]
    print(json.dumps(out))
    pub = B.PUBLISHED
    print("level rel/true/noncorpus%:", [f"{a}/{b}/{100*(a-b)/max(a,1):.2f}" for a, b in zip(rel, tr)])
    print(f"total true {sum(tr)} = {sum(tr)/sum(pub):.3f}x published (reddit ref); "
          f"per level x pub {[round(b/p, 3) for b, p in zip(tr, pub)]}; "
          f"noncorpus {100*(sum(rel)-sum(tr))/sum(rel):.2f}%")


if __name__ == "__main__":
    main()
