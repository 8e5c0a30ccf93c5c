"""code corpus, BPE: held-out excess by class (NON-PRIVATE dev analysis)."""
import sys, pickle, json
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO/benchmarks")
from tokenizers import Tokenizer, decoders
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
if __name__ == "__main__":
    tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    S = Path("SCRATCH")
    if not (S / "code_held.pkl").exists():
        from bench_tokenizers import load
        train, held = load(Path("SCRATCH_CODE/code.jsonl.gz"), 0.2)
        train.write_ndjson(S / "code_train.jsonl"); pickle.dump(held, open(S / "code_held.pkl", "wb"))
    held = pickle.load(open(S / "code_held.pkl", "rb"))
    r = run_recipe(str(PRESETS / "private-bpe.cfg"), S / f"outc_{tag}", force=True,
                   overrides={"paths.corpus": str(S / "code_train.jsonl"), "budget.epsilon": 3.0,
                              "export.vocab_size": 32000, "run.seed": 1, **ovr})
    priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json")); pre = priv.pre_tokenizer
    if not (S / "code_base.json").exists():
        import polars as pl
        texts = pl.read_ndjson(S / "code_train.jsonl")["text"].to_list()
        base = nonprivate_tokenizer(priv, texts, 32000); base.save(str(S / "code_base.json"))
        users = Counter()
        for t in texts: users.update(set(u for u, _ in pre.pre_tokenize_str(t)))
        pickle.dump(users, open(S / "code_users.pkl", "wb"))
    base = Tokenizer.from_file(str(S / "code_base.json")); users = pickle.load(open(S / "code_users.pkl", "rb"))
    rel = set(r.release.items)
    s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
    print(f"{tag}: released {len(rel)} tpw {s['tokens_per_word']:.4f} base {b['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}")
    dec = decoders.ByteLevel()
    def kind(u):
        t = dec.decode([u]).lstrip(" ")
        if not t.strip(): return "space"
        if t.isalpha(): return "alpha"
        if t.isdigit(): return "digit"
        return "other"
    n = Counter(); tp = Counter(); tb = Counter(); ex = Counter()
    for t in held[::2]:
        for u, _ in pre.pre_tokenize_str(t):
            k = users.get(u, 0)
            c = ("rel" if u in rel else ("t>=20" if k >= 20 else ("t1-19" if k else "unseen")), kind(u))
            a, bb = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
            n[c] += 1; tp[c] += a; tb[c] += bb; ex[u] += a - bb
    tot = sum(n.values())
    for c in sorted(n, key=lambda k: -(tp[k] - tb[k])):
        print(f"{str(c):22} share {n[c]/tot:.4f} priv {tp[c]/n[c]:.3f} base {tb[c]/n[c]:.3f} excess {(tp[c]-tb[c])/tot:.4f}")
    print([(u, ex[u], users.get(u, 0), u in rel) for u, _ in ex.most_common(60)])
