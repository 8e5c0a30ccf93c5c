import sys, pickle, unicodedata
from collections import Counter
from tokenizers import Tokenizer, decoders
held = pickle.load(open("SCRATCH_PREV/pypi.pkl", "rb"))
priv = Tokenizer.from_file(sys.argv[1]); base = Tokenizer.from_file(sys.argv[2])
dec = decoders.ByteLevel()
def cls(u):
    s = dec.decode([u])
    if all(ord(c) < 128 for c in s): return "ascii"
    sc = set()
    for c in s:
        if ord(c) < 128: continue
        n = unicodedata.name(c, "?").split()[0]
        sc.add("LATIN" if n == "LATIN" else ("SYM" if not c.isalpha() else n))
    return "+".join(sorted(sc))
n = Counter(); tp = Counter(); tb = Counter()
pre = priv.pre_tokenizer
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(t):
        c = cls(u); n[c] += 1
        tp[c] += len(priv.model.tokenize(u)); tb[c] += len(base.model.tokenize(u))
tot = sum(n.values())
for c, k in n.most_common(15):
    print(f"{c:25} share {k/tot:.4f} priv {tp[c]/k:.2f} base {tb[c]/k:.2f} excess {(tp[c]-tb[c])/tot:.4f}")
print("total excess", (sum(tp.values()) - sum(tb.values()))/tot)
