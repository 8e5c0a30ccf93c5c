"""Held-out metaspace units split by how many training users hold them: tokens per unit of each saved tokenizer."""
import sys, pickle, numpy as np
from collections import Counter
from tokenizers import Tokenizer, normalizers, pre_tokenizers
d = pickle.load(open("ug_items.pkl", "rb")); s = d["strings"]
u = np.bincount(d["items"], minlength=len(s)); users = dict(zip(s, u.tolist()))
held = pickle.load(open("held.pkl", "rb"))[::5]
norm = normalizers.NFKC(); pre = pre_tokenizers.Metaspace("▁", prepend_scheme="always")
units = Counter(w for t in held for w, _ in pre.pre_tokenize_str(norm.normalize_str(t)))
cls = lambda w: (lambda k: "a:>=80" if k >= 80 else "b:20-79" if k >= 20 else "c:1-19" if k >= 1 else "d:unseen")(users.get(w, 0))
tot = Counter(); 
for w, c in units.items(): tot[cls(w)] += c
print("occurrence share", {k: round(v / sum(tot.values()), 4) for k, v in sorted(tot.items())})
for f in sys.argv[1:]:
    tok = Tokenizer.from_file(f); tok.pre_tokenizer = None; tok.normalizer = None
    out = Counter()
    ws = list(units)
    for i in range(0, len(ws), 20000):
        for w, e in zip(ws[i:i+20000], tok.encode_batch(ws[i:i+20000], add_special_tokens=False)):
            out[cls(w)] += len(e.ids) * units[w]
    print(f, {k: round(out[k] / tot[k], 3) for k in sorted(tot)}, "all", round(sum(out.values()) / sum(tot.values()), 4))
