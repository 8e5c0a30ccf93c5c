import pickle, re, sys
from tokenizers import Tokenizer
from collections import Counter
held = pickle.load(open("SCRATCH_PREV/reddit_ug_tab.pkl", "rb"))["held"]
priv = Tokenizer.from_file(sys.argv[1]); base = Tokenizer.from_file("base_ug.json")
norm, pre = priv.normalizer, priv.pre_tokenizer
users = pickle.load(open("ug_users.pkl", "rb"))
n = 0; kinds = Counter(); ex = Counter()
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(norm.normalize_str(t)):
        w = u.lstrip("▁")
        if u in users or w.isalpha() or not any(c.isalpha() for c in w): continue
        p, b = priv.model.tokenize(u), base.model.tokenize(u)
        k = "url" if ("http" in w or "www." in w or ".com" in w) else ("md" if any(c in w for c in "[]()*") else ("hyph" if "-" in w else "other"))
        kinds[k] += 1; ex[k] += len(p) - len(b)
        if n < 12 and k == "url":
            n += 1; print(len(p), len(b), [x.value for x in p][:40]); print("   ", [x.value for x in b][:40])
print(kinds, ex)
