import os
import sys, json, pickle
from collections import Counter
sys.path.insert(0, os.environ["SCRATCH"])
from surgery import load, surgery, isolated_fn
from pubscript import script
from dp_vocab.research.heldout import tokenizer_scores
tok, held = load(sys.argv[1], sys.argv[2]); np_tpw = float(sys.argv[3]); release = sys.argv[4]
rel = Counter()
for l in open(release):
    for ch in set(json.loads(l)["item"]):
        if ord(ch) > 127: rel[script(ch)] += 1
present = {s for s, n in rel.items() if n >= 3}
print("present", sorted(present))
pub = pickle.load(open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "rb"))["max"]
iso = isolated_fn(tok); v = tok.get_vocab()
for N in map(int, sys.argv[5:]):
    chars, cost = set(), 0
    for ch, _ in pub.most_common():
        if script(ch) not in present: continue
        c = (ch not in v) + ((not iso(ch)) and ("##" + ch not in v))
        if cost + c > N: break
        cost += c; chars.add(ch)
    t, k = surgery(tok, chars)
    s = tokenizer_scores(t, held)
    print(f"scripts-fill N={N} +{k}: tokens/word {s['tokens_per_word']:.4f} (x{s['tokens_per_word']/np_tpw:.4f}) unk {100*s['unknown_rate']:.3f}%", flush=True)
