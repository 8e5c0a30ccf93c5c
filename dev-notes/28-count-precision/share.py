"""Script shares: training-text units (occurrences, users) vs the release's DP counts (NON-PRIVATE dev)."""
import sys, json, unicodedata
from collections import Counter
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
out, train = sys.argv[1:3]
priv = Tokenizer.from_file(out + "/hf/tokenizer.json"); dec = ByteLevel()
def sc(t):
    if not any(c.isalpha() for c in t): return None
    for c in t:
        if ord(c) > 0x7f and c.isalpha(): return unicodedata.name(c, "?").split(" ")[0]
    return "ascii"
occ = Counter(); usr = Counter(); chars = Counter()
for line in open(train):
    d = json.loads(line)
    seen = set()
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(d["text"]):
        s = sc(dec.decode([u]))
        if s: occ[s] += 1; seen.add(s)
        if s and s != "ascii": chars[s] += len(dec.decode([u]).strip())
    for s in seen: usr[s] += 1
rel = Counter()
for l in open(out + "/vocab.jsonl"):
    d = json.loads(l); s = sc(dec.decode([d["item"]]))
    if s and d["noisy_count"] > 0: rel[s] += d["noisy_count"]
T, R = sum(occ.values()), sum(rel.values())
for s, v in occ.most_common(12):
    print(f"{s:12} occ share {v/T:.5f} users {usr[s]} chars {chars[s]} released share {rel[s]/R:.5f}")
