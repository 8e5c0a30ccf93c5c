"""DP cost estimate of a fragment stage (simulation; NON-PRIVATE evaluation).
Stage 1 = an existing DP release R of whole units (its items and DP counts: rel json), or the oracle set (>= T users).
Stage 2 = fragments (frag_oracle.fragments) of each user's TAIL units (units not in R), released by the
real policy_gaussian_public at (eps2, delta2) with public list P = the same fragments of wordfreq's words
(public), then their counts by the real normalised_gaussian_counts at (eps2c, delta2c).
usage: dp_sim.py MODEL SCHEME REL_JSON EPS2 EPS2C SEED [train]"""
import sys, time, pickle, json
from collections import Counter
import numpy as np
from frag_oracle import fragments, FillPlus, D, BASE
from dp_vocab.data.itemsets import ItemSets
from dp_vocab.data.vocabulary import Vocabulary
from dp_vocab.mechanisms.public import PolicyGaussianPublic
from dp_vocab.mechanisms.count_release import NormalisedGaussianCounts
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.data.release import Release
from dp_vocab.research.heldout import tokenizer_scores


def public_fragments(model, scheme, nmax=6, words=150_000):
    import wordfreq
    freq = sorted(wordfreq.get_frequency_dict("en").items(), key=lambda kv: (-kv[1], kv[0]))[:words]
    mark = "Ġ" if model == "bpe" else "▁"
    score = Counter()
    units = []
    for w, f in freq:
        units.append((mark + w, f))
    fstr, fptr, fids, fmult = fragments([u for u, _ in units], scheme, 2, nmax)
    sc = np.bincount(np.repeat(np.arange(len(units)), np.diff(fptr)), minlength=len(units))
    s = np.zeros(len(fstr))
    np.add.at(s, fids, np.repeat(np.array([f for _, f in units]), np.diff(fptr)) * fmult)
    order = np.argsort(-s, kind="stable")
    return [fstr[i] for i in order[:320_000]]


def main():
    model, scheme, relpath, eps2, eps2c, seed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    train = len(sys.argv) > 7
    delta2 = 5e-6
    t = time.time()
    d = pickle.load(open(f"{D}/{model}_items.pkl", "rb"))
    strings, items, counts, indptr = d["strings"], d["items"], d["counts"], d["indptr"]
    n = len(strings)
    if relpath.startswith("T="):
        T = int(relpath[2:])
        users = np.bincount(items, minlength=n)
        exact = np.bincount(items, weights=counts, minlength=n)
        rel_counts = {strings[i]: float(exact[i]) for i in np.flatnonzero(users >= T).tolist()}
    else:
        rel = json.load(open(relpath))
        rel_counts = {k: float(v) for k, v in rel["counts"].items()}
    sid = {s: i for i, s in enumerate(strings)}
    released = np.zeros(n, bool)
    for s in rel_counts:
        if s in sid:
            released[sid[s]] = True
    tail = ~released
    fstr, fptr, fids, fmult = fragments(strings, scheme, 2, 6)
    nf = len(fstr)
    lens = np.diff(fptr)
    rows = np.repeat(np.arange(d["n_users"]), np.diff(indptr))
    tm = tail[items]
    tu, ti, tc = rows[tm], items[tm], counts[tm]
    reps = lens[ti]
    idx = np.repeat(fptr[ti] - np.cumsum(np.r_[0, reps[:-1]]), reps) + np.arange(reps.sum())
    u_rep = np.repeat(tu, reps).astype(np.int64)
    occ = np.repeat(tc, reps) * fmult[idx]
    key = u_rep * nf + fids[idx]
    uk, inv = np.unique(key, return_inverse=True)
    ocnt = np.bincount(inv, weights=occ)
    del key, inv, idx, occ, u_rep
    pu, pf = uk // nf, uk % nf
    # CSR per user (uk sorted by user then fragment)
    uptr = np.r_[0, np.cumsum(np.bincount(pu, minlength=d["n_users"]))]
    fusers = np.bincount(pf, minlength=nf)
    print(f"# {model} {scheme}: released units {released.sum()}, tail units {tail.sum()}, fragments {nf}, "
          f"(user, fragment) pairs {len(uk)}; >=20 users {int((fusers >= 20).sum())}, >=40 {int((fusers >= 40).sum())}, "
          f">=100 {int((fusers >= 100).sum())}; {time.time() - t:.0f}s", flush=True)
    its = ItemSets(Vocabulary.from_strings(list(fstr)), [f"u{i}" for i in range(d["n_users"])], uptr,
                   pf.astype(np.int32), np.minimum(ocnt, 2**31 - 1).astype(np.int32))
    P = public_fragments(model, scheme)
    mech = PolicyGaussianPublic(epsilon=eps2, delta=delta2, max_items_per_user=1000, alpha=2.0, public_items=P)
    rs = RandomSource(seed)
    t = time.time()
    r = mech.release(its, random=rs)
    got = np.array([fusers[i] for i in (its.vocab.get(s) for s in r.items) if i is not None])
    inP = len(set(r.items) & set(P))
    print(f"stage2 eps={eps2}: sigma {mech.noise_scale:.2f} rho {mech.threshold:.2f}; released {len(r.items)} "
          f"({inP} in P); users of released fragments: min {got.min() if len(got) else 0} "
          f"p10 {np.percentile(got, 10) if len(got) else 0:.0f} median {np.median(got) if len(got) else 0:.0f}; {time.time() - t:.0f}s",
          flush=True)
    for T in (20, 40, 100, 200):
        print(f"  of the >= {T}-user fragments: {int(((fusers >= T)[[its.vocab.get(s) for s in r.items if its.vocab.get(s) is not None]]).sum())} "
              f"released / {int((fusers >= T).sum())}", flush=True)
    cm = NormalisedGaussianCounts(eps2c, delta2, 1000, 1, 100)
    fc = cm.release_counts(its, sorted(r.items), rs)
    true = dict(zip(sorted(r.items), cm.true_sums(its, sorted(r.items), rs.key()).tolist()))
    rel_err = np.array([abs(fc[s] - true[s]) / max(true[s], 1) for s in fc])
    print(f"counts eps={eps2c}: sigma {cm.noise_scale:.1f}; median |noise|/true {np.median(rel_err):.3f}; "
          f"true weighted-user counts median {np.median(list(true.values())):.0f}", flush=True)
    json.dump({"items": sorted(r.items), "counts": fc}, open(f"{D}/frag_{model}_{scheme}_{eps2}_{eps2c}_{seed}.json", "w"))
    if not train:
        return
    held = pickle.load(open(f"{D}/held.pkl", "rb"))
    # fragment weights in the units of the stage-1 counts: each scaled like the oracle's pair/edge weighting
    K = 5
    wf = (lambda f: 1.0 / ((len(f) - 1) * K)) if scheme == "ngram" else (lambda f: 1.0 / K)
    runs = {"train": (("+fragments", {f: c * wf(f) for f, c in fc.items() if c > 0}),), "train0": (("stage1 only", {}),)}[sys.argv[7]]
    for label, extra in runs:
        exporter = HFTokenizerExporter(model="bpe" if model == "bpe" else "unigram",
                                       style="gpt2" if model == "bpe" else "sentencepiece",
                                       vocab_size=32000, public_prior="wordfreq:en")
        exporter.public_prior = FillPlus(exporter.public_prior, extra)
        rel = Release(items=sorted(rel_counts), mechanism="sim", params={}, epsilon=0, delta=0, randomness={},
                      privacy={}, counts=rel_counts)
        t = time.time()
        tok = exporter.build(rel, d["describe"])
        sc = tokenizer_scores(tok, held)
        res = {"model": model, "sim": label, "scheme": scheme, "rel": relpath, "eps2": eps2, "eps2c": eps2c, "seed": seed,
               "fragments": len(extra), "size": tok.get_vocab_size(), "tpw": sc["tokens_per_word"],
               "ratio": sc["tokens_per_word"] / BASE[model], "seconds": round(time.time() - t)}
        print(json.dumps(res), flush=True)
        with open(f"{D}/results_dp.jsonl", "a") as fh:
            fh.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
