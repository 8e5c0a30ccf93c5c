"""Which tail units cost the private BPE most (NON-PRIVATE dev analysis). tailx.py OUT BASE HELD USERS"""
import sys, pickle, json
from collections import Counter
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
out, basef, heldf, usersf = sys.argv[1:5]
priv = Tokenizer.from_file(out + "/hf/tokenizer.json"); base = Tokenizer.from_file(basef)
held = pickle.load(open(heldf, "rb")); users = pickle.load(open(usersf, "rb"))
rel = set(json.loads(l)["item"] for l in open(out + "/vocab.jsonl"))
dec = ByteLevel()
ex = Counter(); n = Counter(); kinds = Counter(); kn = Counter()
def kind(t):
    t = t.strip()
    if "_" in t: return "underscore"
    if any(c.isdigit() for c in t) and any(c.isalpha() for c in t): return "alnum"
    if t[:1].isupper() and any(c.isupper() for c in t[1:]): return "camel/CAPS"
    if t.isalpha() and t.isascii(): return "ascii-letters"
    if not t.isascii(): return "non-ascii"
    return "other"
for t in held[::4]:
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(t):
        if u in rel or users.get(u, 0) >= 20: continue
        d = len(priv.model.tokenize(u)) - len(base.model.tokenize(u))
        ex[u] += d; n[u] += 1
        k = kind(dec.decode([u])); kinds[k] += d; kn[k] += 1
tot = sum(n.values())
print("tail units", tot, "excess", sum(ex.values()))
for k, v in kinds.most_common():
    print(f"  {k:14} units {kn[k]} excess {v} per unit {v/kn[k]:.3f}")
print([(dec.decode([u]), n[u], ex[u]) for u, _ in ex.most_common(60)])
