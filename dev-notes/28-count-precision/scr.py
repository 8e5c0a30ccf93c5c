"""Held-out excess of private BPE over base, by script of the unit (NON-PRIVATE dev analysis)."""
import sys, pickle, json, unicodedata
from collections import Counter
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
out, basef, heldf, usersf = sys.argv[1:5]
priv = Tokenizer.from_file(out + "/hf/tokenizer.json"); base = Tokenizer.from_file(basef)
held = pickle.load(open(heldf, "rb")); users = pickle.load(open(usersf, "rb"))
rel = set(json.loads(l)["item"] for l in open(out + "/vocab.jsonl"))
dec = ByteLevel()
def script(t):
    for c in t:
        if ord(c) > 0x7f and c.isalpha():
            return unicodedata.name(c, "?").split(" ")[0]
    if not t.isascii(): return "nonascii-other"
    return "ascii"
ex = Counter(); n = Counter(); bt = Counter(); tot_b = 0; tot_ex = 0
exu = Counter()
for t in held:
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(t):
        p = len(priv.model.tokenize(u)); b = len(base.model.tokenize(u))
        tot_b += b; tot_ex += p - b
        s = script(dec.decode([u]))
        tail = "rel" if u in rel else ("u20" if users.get(u, 0) >= 20 else "tail")
        ex[(s, tail)] += p - b; n[(s, tail)] += 1; bt[s] += b
        if s != "ascii": exu[dec.decode([u])] += p - b
print("base tokens", tot_b, "excess", tot_ex, f"{tot_ex/tot_b:.4f}")
bys = Counter()
for (s, tl), v in ex.items(): bys[s] += v
for s, v in bys.most_common(25):
    print(f"{s:16} excess {v:7d} ({v/tot_b*100:.3f} pts)  base tokens {bt[s]}", {tl: ex[(s, tl)] for tl in ("rel", "u20", "tail")})
print(exu.most_common(50))
