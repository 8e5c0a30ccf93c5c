"""ORACLE (exact counts, NON-PRIVATE): released units = units held by >= T training users (exact counts), plus
FRAGMENT pseudo-units from the tail (units held by < T users): substrings of tail units, kept when >= T distinct
users hold a tail unit containing them, with count = weighted occurrences in the tail.
usage: frag_oracle.py MODEL(bpe|ug) T VARIANT[,VARIANT...]
variants: none | ngram:pair | ngram:flat | ngram:char | edge   (+ optional @NMAX, e.g. ngram:pair@8)"""
import sys, time, pickle, json
from collections import Counter
import numpy as np
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.data.release import Release
from dp_vocab.research.heldout import tokenizer_scores

D = "SCRATCH"
BASE = {"bpe": 1.0782, "ug": 0.9656}


def fragments(strings, scheme, nmin, nmax):
    """CSR unit -> (fragment id, multiplicity) for every unit."""
    fid, fstr = {}, []
    indptr = [0]; fids = []; mult = []
    for s in strings:
        c = Counter()
        L = len(s)
        if scheme == "ngram":
            for n in range(nmin, min(nmax, L) + 1):
                for i in range(L - n + 1):
                    c[s[i:i + n]] += 1
        else:  # edge: prefixes and suffixes
            for n in range(nmin, min(nmax, L) + 1):
                c[s[:n]] += 1
                c[s[L - n:]] += 1
        for f, m in c.items():
            j = fid.get(f)
            if j is None:
                j = fid[f] = len(fstr); fstr.append(f)
            fids.append(j); mult.append(m)
        indptr.append(len(fids))
    return fstr, np.array(indptr, dtype=np.int64), np.array(fids, dtype=np.int64), np.array(mult, dtype=np.float64)


class FillPlus:
    """The recipe's public prior, then the fragment pseudo-units added to the table."""
    def __init__(self, prior, extra):
        self.prior, self.extra = prior, extra

    def fill(self, units, units_of, new_characters):
        out = self.prior.fill(units, units_of, new_characters) if self.prior else dict(units)
        for f, c in self.extra.items():
            out[f] = out.get(f, 0.0) + c
        return out


def main():
    model, T, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    prior = "wordfreq:en" if len(sys.argv) <= 4 or sys.argv[4] != "noprior" else None
    d = pickle.load(open(f"{D}/{model}_items.pkl", "rb"))
    held = pickle.load(open(f"{D}/held.pkl", "rb"))
    strings, items, counts, indptr = d["strings"], d["items"], d["counts"], d["indptr"]
    n = len(strings)
    exact = np.bincount(items, weights=counts, minlength=n)
    users = np.bincount(items, minlength=n)
    rows = np.repeat(np.arange(d["n_users"]), np.diff(indptr))
    released = users >= T
    tail = ~released
    tail_mass = exact[tail].sum() / exact.sum()
    print(f"# {model} T={T}: units {n}, released {released.sum()}, tail units {tail.sum()} "
          f"({100 * tail_mass:.2f}% of occurrences)", flush=True)
    rel_counts = {strings[i]: float(exact[i]) for i in np.flatnonzero(released).tolist()}
    cache = {}
    for var in variants:
        t = time.time()
        extra = {}
        if var != "none":
            spec, _, nm = var.partition("@")
            scheme, _, weight = spec.partition(":")
            nmax = int(nm) if nm else 6
            key = (scheme, nmax)
            if key not in cache:
                cache[key] = fragments(strings, scheme, 2, nmax)
            fstr, fptr, fids, fmult = cache[key]
            nf = len(fstr)
            lens = np.diff(fptr)
            # occurrences in the tail
            tail_units = np.flatnonzero(tail)
            sel = np.repeat(tail[np.arange(n)], lens)
            unit_of = np.repeat(np.arange(n), lens)
            occ = np.bincount(fids[sel], weights=(exact[unit_of] * fmult)[sel], minlength=nf)
            # distinct users holding a tail unit with the fragment
            tmask = tail[items]
            tu, ti = rows[tmask], items[tmask]
            reps = lens[ti]
            starts = fptr[ti]
            idx = np.repeat(starts - np.cumsum(np.r_[0, reps[:-1]]), reps) + np.arange(reps.sum())
            pair = np.unique(np.repeat(tu, reps).astype(np.int64) * nf + fids[idx])
            fusers = np.bincount(pair % nf, minlength=nf)
            del pair, idx
            flen = np.array([len(f) for f in fstr])
            K = nmax - 1
            w = {"pair": 1.0 / ((flen - 1) * K), "flat": np.ones(nf), "char": 1.0 / (flen * K),
                 "": np.full(nf, 1.0 / K)}[weight]
            keep = np.flatnonzero((fusers >= T) & (occ > 0))
            extra = {fstr[j]: float(occ[j] * w[j]) for j in keep.tolist()}
            print(f"  {var}: fragments {nf}, kept {len(keep)}, weighted mass {sum(extra.values()):.0f} "
                  f"(tail occ {exact[tail].sum():.0f}, released {exact[released].sum():.0f}); "
                  f"prep {time.time() - t:.0f}s", flush=True)
        exporter = HFTokenizerExporter(model="bpe" if model == "bpe" else "unigram",
                                       style="gpt2" if model == "bpe" else "sentencepiece",
                                       vocab_size=32000, public_prior=prior)
        exporter.public_prior = FillPlus(exporter.public_prior, extra)
        rel = Release(items=sorted(rel_counts), mechanism="oracle", params={}, epsilon=0, delta=0,
                      randomness={}, privacy={}, counts=rel_counts)
        t = time.time()
        tok = exporter.build(rel, d["describe"])
        sc = tokenizer_scores(tok, held)
        r = {"model": model, "T": T, "variant": var, "prior": prior, "released": int(released.sum()),
             "fragments": len(extra), "size": tok.get_vocab_size(), "tpw": sc["tokens_per_word"],
             "ratio": sc["tokens_per_word"] / BASE[model], "seconds": round(time.time() - t)}
        print(json.dumps(r), flush=True)
        with open(f"{D}/results.jsonl", "a") as fh:
            fh.write(json.dumps(r) + "\n")
        tok.save(f"{D}/tok_{model}_{T}_{var.replace(':', '-').replace('@', '_')}_{'p' if prior else 'np'}.json")


if __name__ == "__main__":
    main()
