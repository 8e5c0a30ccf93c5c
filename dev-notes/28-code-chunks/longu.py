import sys, json, pickle, re
from collections import Counter
from tokenizers import Tokenizer
exec(open("cls.py").read().split("def tier")[0].split("users = Counter()")[0])
users = pickle.load(open("users_" + out + ".pkl", "rb"))
tp = Counter(); tb = Counter(); n = Counter(); info = {}
for t in held[::2]:
    if norm: t = norm.normalize_str(t)
    for u, _ in pre.pre_tokenize_str(t):
        if u not in info:
            info[u] = (len(priv.model.tokenize(u)), len(base.model.tokenize(u)))
        a, b = info[u]
        L = len(u); k = users.get(u, 0)
        key = ("<=50" if L <= 50 else "51-80" if L <= 80 else "81-128" if L <= 128 else ">128") + ("/t>=20" if k >= 20 else "/t<20")
        tp[key] += a; tb[key] += b; n[key] += 1; tp["all"] += a; tb["all"] += b
for k in sorted(n):
    print(k, n[k], tp[k], tb[k], "excess/base %.4f" % ((tp[k] - tb[k]) / tb["all"]))
print(tp["all"] / tb["all"])
