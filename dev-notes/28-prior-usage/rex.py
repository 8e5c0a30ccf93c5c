"""Re-export a saved release (out_TAG/vocab.jsonl + privacy.json) with patched exporter variants;
score against the non-private BPE and split the excess (NON-PRIVATE dev analysis).
python rex.py OUTDIR VARIANT[,VARIANT...]"""
import sys, json, pickle, os, importlib
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab.data.release import Release
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.research.heldout import tokenizer_scores
import variants

def load(outdir):
    rec = json.load(open(f"{outdir}/privacy.json"))
    counts = {}
    for line in open(f"{outdir}/vocab.jsonl"):
        d = json.loads(line); counts[d["item"]] = d["noisy_count"]
    rel = Release(items=sorted(counts), mechanism=rec["mechanism"], params={}, epsilon=3, delta=1e-5,
                  randomness={}, privacy={}, counts=counts, counts_info=rec["noisy_counts"])
    return rel, rec["items"]

def main():
    outdir, vs = sys.argv[1], sys.argv[2].split(",")
    model = os.environ.get("MODEL", "bpe")
    style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
    held = pickle.load(open(os.environ.get("HELD", "pypi.pkl"), "rb"))
    base = Tokenizer.from_file(os.environ.get("BASE", "base_pypi_bpe.json"))
    b = tokenizer_scores(base, held)
    rel, items = load(outdir)
    for v in vs:
        undo = variants.apply(v)
        ex = HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en")
        tok = ex.build(rel, items)
        undo()
        s = tokenizer_scores(tok, held)
        print(f"{outdir} {v}: tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} "
              f"unk {100*s['unknown_rate']:.3f}% size {tok.get_vocab_size()}", flush=True)
        if os.environ.get("CLS"):
            classes(tok, base, held, rel)

def classes(priv, base, held, rel):
    users = pickle.load(open(os.environ.get("USERS", "pypi_users.pkl"), "rb"))
    counts = rel.counts; sig = rel.counts_info["scale"]
    def cls(u):
        if u in counts:
            c = counts[u] / sig
            return "rel<1s" if c < 1 else "rel1-2.6s" if c < 2.6 else "rel2.6-6s" if c < 6 else "rel>6s"
        k = users.get(u, 0)
        return "t>=20" if k >= 20 else ("t1-19" if k else "unseen")
    n = Counter(); tp = Counter(); tb = Counter(); pre = priv.pre_tokenizer
    for t in held[::4]:
        for u, _ in pre.pre_tokenize_str(t):
            c = cls(u); a, bb = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
            n[c] += 1; tp[c] += a; tb[c] += bb
    tot = sum(n.values())
    for key in sorted(n, key=lambda k: -(tp[k] - tb[k])):
        print(f"  {key:10} share {n[key]/tot:.4f} priv {tp[key]/n[key]:.3f} base {tb[key]/n[key]:.3f} excess {(tp[key]-tb[key])/tot:.4f}")
    vocab = priv.get_vocab(); bvocab = base.get_vocab()
    print("  released whole: priv", sum(u in vocab for u in counts), "base", sum(u in bvocab for u in counts), "of", len(counts))

if __name__ == "__main__":
    main()
