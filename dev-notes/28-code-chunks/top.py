import sys, json, pickle, re
from collections import Counter
from tokenizers import Tokenizer
exec(open("cls.py").read().split("def tier")[0].split("users = Counter()")[0])
users = pickle.load(open("users_" + out + ".pkl", "rb"))
ex = Counter(); cnt = Counter(); info = {}
for t in held[::2]:
    if norm: t = norm.normalize_str(t)
    for u, _ in pre.pre_tokenize_str(t):
        if u in rel: continue
        if u not in info:
            info[u] = (len(priv.model.tokenize(u)), len(base.model.tokenize(u)))
        a, b = info[u]; ex[u] += a - b; cnt[u] += 1
want = sys.argv[5]
lo, hi = {"t20": (20, 10**9), "t5": (5, 19), "t1": (1, 4), "t0": (0, 0)}[want]
sel = [(u, e) for u, e in ex.most_common() if lo <= users.get(u, 0) <= hi]
tot = sum(e for _, e in sel); print("total excess", tot)
for u, e in sel[:60]:
    print(repr(u), e, cnt[u], users.get(u, 0), info[u])
