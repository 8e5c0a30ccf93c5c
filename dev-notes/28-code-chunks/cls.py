import sys, json, pickle, re
from collections import Counter
from tokenizers import Tokenizer
out, basef, heldf, train = sys.argv[1:5]
priv, base = Tokenizer.from_file(out + "/hf/tokenizer.json"), Tokenizer.from_file(basef)
held = pickle.load(open(heldf, "rb"))
rel = {}
for line in open(out + "/vocab.jsonl"):
    d = json.loads(line); rel[d["item"]] = d.get("noisy_count")
pre = priv.pre_tokenizer; norm = priv.normalizer
users = Counter()
try:
    users = pickle.load(open("users_" + out + ".pkl", "rb"))
except FileNotFoundError:
    for i, line in enumerate(open(train)):
        t = json.loads(line)["text"]
        if norm: t = norm.normalize_str(t)
        users.update(set(u for u, _ in pre.pre_tokenize_str(t)))
    pickle.dump(users, open("users_" + out + ".pkl", "wb"))
def kind(u):
    s = u.lstrip("Ġ")
    if not s or set(u) <= set("ĠĊĉč"): return "space"
    if re.fullmatch(r"[A-Za-z]+", s): return "alpha" + ("_sp" if u.startswith("Ġ") else "")
    if re.fullmatch(r"[0-9]+", s): return "digits"
    if all(ord(c) < 0x100 for c in u) and not re.search(r"[A-Za-z0-9]", s): return "punct"
    return "other"
def tier(u):
    if u in rel: return "rel"
    k = users.get(u, 0)
    return "t>=20" if k >= 20 else "t5-19" if k >= 5 else "t1-4" if k else "unseen"
n = Counter(); tp = Counter(); tb = Counter()
cache = {}
for t in held[::2]:
    if norm: t = norm.normalize_str(t)
    for u, _ in pre.pre_tokenize_str(t):
        if u not in cache:
            cache[u] = (kind(u), tier(u), len(priv.model.tokenize(u)), len(base.model.tokenize(u)))
        k, ti, a, b = cache[u]
        for key in (k, ti, k + "/" + ti):
            n[key] += 1; tp[key] += a; tb[key] += b
tot = sum(n[k] for k in n if "/" not in k and k in ("space","alpha","alpha_sp","digits","punct","other"))
TP = sum(tp[k] for k in ("space","alpha","alpha_sp","digits","punct","other")); TB = sum(tb[k] for k in ("space","alpha","alpha_sp","digits","punct","other"))
print(f"units {tot} priv {TP} base {TB} ratio {TP/TB:.4f}")
for key in sorted(n, key=lambda k: -(tp[k] - tb[k])):
    print(f"  {key:18} share {n[key]/tot:.4f} priv {tp[key]/n[key]:.3f} base {tb[key]/n[key]:.3f} excess/base {(tp[key]-tb[key])/TB:.4f}")
