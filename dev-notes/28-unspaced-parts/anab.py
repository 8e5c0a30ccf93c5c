"""pypi BPE, current code: held-out excess by script and class; top excess units (NON-PRIVATE dev analysis)."""
import sys, pickle, json, unicodedata
from collections import Counter
from tokenizers import Tokenizer, decoders
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import tokenizer_scores
P = "SCRATCH_PREV/"
tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
eps = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
held = pickle.load(open(P + "pypi.pkl", "rb"))
r = run_recipe(str(PRESETS / "private-bpe.cfg"), f"SCRATCH/outp_{tag}", force=True,
               overrides={"paths.corpus": P + "pypi_train.jsonl", "budget.epsilon": eps,
                          "export.vocab_size": 32000, "run.seed": 1, **ovr})
priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
base = Tokenizer.from_file(P + "basep_bpe.json"); users = pickle.load(open(P + "pypi_users.pkl", "rb"))
rel = set(r.release.items)
s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
print(f"{tag}: released {len(rel)} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}")
dec = decoders.ByteLevel()
def script(u):
    t = dec.decode([u])
    if t.isascii(): return "ascii"
    sc = set()
    for c in t:
        if ord(c) < 128: continue
        n = unicodedata.name(c, "?").split()[0]
        sc.add("LATIN" if n == "LATIN" else ("SYM" if not c.isalpha() else n))
    return "+".join(sorted(sc))
def kind(u):
    t = dec.decode([u]).strip()
    if t.isalpha(): return "alpha"
    if t.isdigit(): return "digit"
    if t.isalnum(): return "alnum"
    return "other"
n = Counter(); tp = Counter(); tb = Counter(); ex = Counter(); exn = Counter()
pre = priv.pre_tokenizer
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(t):
        k = users.get(u, 0)
        c = "rel" if u in rel else ("t>=20" if k >= 20 else ("t1-19" if k else "unseen"))
        sc = script(u); key = (sc if sc in ("ascii", "CJK") else "other", c, kind(u) if sc == "ascii" else "")
        a, bb = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
        n[key] += 1; tp[key] += a; tb[key] += bb
        ex[u] += a - bb; exn[u] += 1
tot = sum(n.values())
for key in sorted(n, key=lambda k: -(tp[k] - tb[k])):
    print(f"{str(key):35} share {n[key]/tot:.4f} priv {tp[key]/n[key]:.3f} base {tb[key]/n[key]:.3f} excess {(tp[key]-tb[key])/tot:.4f}")
print("total", (sum(tp.values()) - sum(tb.values())) / tot)
print([(u, ex[u], exn[u], users.get(u, 0), u in rel) for u, _ in ex.most_common(80)])
print("neg", [(u, ex[u], exn[u], users.get(u, 0), u in rel) for u, _ in sorted(ex.items(), key=lambda x: x[1])[:40]])
