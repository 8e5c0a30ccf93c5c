import sys, pickle
from collections import Counter
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
held = pickle.load(open("SCRATCH_PREV/reddit_ug_tab.pkl", "rb"))["held"]
priv = Tokenizer.from_file("outu_base/hf/tokenizer.json"); base = Tokenizer.from_file("base_ug.json")
users = pickle.load(open("ug_users.pkl", "rb"))
norm, pre = priv.normalizer, priv.pre_tokenizer
ex = []; kinds = Counter()
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(norm.normalize_str(t)):
        w = u.lstrip("▁")
        if users.get(u, 0) == 0 and any(c.isalpha() for c in w) and not w.isalpha() and not (w[:-1].isalpha() and w[-1] in ".,"):
            p, b = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
            k = "url" if ("http" in w or "www." in w or ".com" in w) else ("markdown" if any(c in w for c in "[]()*") else ("hyphen" if "-" in w else "other"))
            kinds[k, "n"] += 1; kinds[k, "ex"] += p - b
            if len(ex) < 40 and k == "other": ex.append((u, p, b))
print(kinds)
for u, p, b in ex: print(p, b, u[:100])
