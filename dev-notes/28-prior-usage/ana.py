"""pypi BPE: ratio + held-out excess by class (NON-PRIVATE dev analysis)."""
import sys, pickle, json, os
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import tokenizer_scores
def main():
    tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    eps = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    model = os.environ.get("MODEL", "bpe")
    held = pickle.load(open(os.environ.get("HELD", "pypi.pkl"), "rb"))
    r = run_recipe(str(PRESETS / f"private-{model}.cfg"), f"out_{tag}", force=True,
                   overrides={"paths.corpus": os.environ.get("TRAIN", "pypi_train.jsonl"), "budget.epsilon": eps,
                              "export.vocab_size": 32000, "run.seed": int(os.environ.get("SEED", 1)), **ovr})
    priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
    base = Tokenizer.from_file(os.environ.get("BASE", "basep_bpe.json"))
    s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
    print(f"{tag} eps {eps}: released {len(r.release.items)} size {priv.get_vocab_size()} tpw {s['tokens_per_word']:.4f} base {b['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {s['unknown_rate']*100:.3f}%", flush=True)
    if model != "bpe" or os.environ.get("NOCLS"):
        return
    users = pickle.load(open("pypi_users.pkl", "rb"))
    counts = r.release.counts; sig = r.release.counts_info["scale"]
    vocab = priv.get_vocab(); bvocab = base.get_vocab()
    def cls(u):
        if u in counts:
            c = counts[u] / sig
            return "rel<1s" if c < 1 else "rel1-2.6s" if c < 2.6 else "rel2.6-6s" if c < 6 else "rel>6s"
        k = users.get(u, 0)
        return "t>=20" if k >= 20 else ("t1-19" if k else "unseen")
    n = Counter(); tp = Counter(); tb = Counter()
    pre = priv.pre_tokenizer
    for t in held[::4]:
        for u, _ in pre.pre_tokenize_str(t):
            c = cls(u)
            a, bb = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
            n[c] += 1; tp[c] += a; tb[c] += bb
    tot = sum(n.values())
    for key in sorted(n, key=lambda k: -(tp[k] - tb[k])):
        print(f"  {key:10} share {n[key]/tot:.4f} priv {tp[key]/n[key]:.3f} base {tb[key]/n[key]:.3f} excess {(tp[key]-tb[key])/tot:.4f}")
    print("  total", (sum(tp.values()) - sum(tb.values())) / tot)
    rel = list(counts)
    print("  released whole: priv", sum(u in vocab for u in rel), "base", sum(u in bvocab for u in rel), "of", len(rel))


if __name__ == '__main__':
    main()