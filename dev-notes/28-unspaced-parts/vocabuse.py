import json, sys, pickle
from tokenizers import Tokenizer
from dp_vocab.export.hf import _byte_level_text
d = sys.argv[1]
rel = {json.loads(l)["item"]: json.loads(l)["noisy_count"] for l in open(d + "/vocab.jsonl")}
v = json.load(open(d + "/hf/tokenizer.json"))["model"]["vocab"]
base = json.load(open(sys.argv[2]))["model"]["vocab"]
whole = [t for t in v if t in rel]
def script(t):
    s = _byte_level_text(t)
    if s.isascii(): return "ascii"
    return "nonascii"
from collections import Counter
print("private vocab", len(v), "released whole", len(whole), "released total", len(rel))
print("private non-released tokens by script", Counter(script(t) for t in v if t not in rel))
print("base vocab tokens that are released units", sum(1 for t in base if t in rel), "base by script", Counter(script(t) for t in base))
print("private by script", Counter(script(t) for t in v))
cnt = sorted(rel[t] for t in whole); import numpy as np
lost = [c for t, c in rel.items() if t not in v]
print("released not whole:", len(lost), "count pct", np.percentile(lost, [10, 50, 90]) if lost else None)
