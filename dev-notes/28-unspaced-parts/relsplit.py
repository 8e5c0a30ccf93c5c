import json, pickle, sys
from collections import Counter
from tokenizers import Tokenizer
P = "SCRATCH_PREV/"
d = sys.argv[1]
counts = {json.loads(l)["item"]: json.loads(l)["noisy_count"] for l in open(d + "/vocab.jsonl")}
priv = Tokenizer.from_file(d + "/hf/tokenizer.json"); base = Tokenizer.from_file(P + "basep_bpe.json")
held = pickle.load(open(P + "pypi.pkl", "rb")); users = pickle.load(open(P + "pypi_users.pkl", "rb"))
occ = Counter()
pre = priv.pre_tokenizer
for t in held[::4]:
    occ.update(u for u, _ in pre.pre_tokenize_str(t) if u in counts)
bins = Counter(); exb = Counter()
for u, n in occ.items():
    a, b = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
    c = counts[u]; k = "c<=567" if c <= 567 else ("567-1500" if c < 1500 else ("1500-5000" if c < 5000 else ">5000"))
    bins[k] += n; exb[k] += n * (a - b)
tot = sum(occ.values())
for k in bins: print(f"{k:10} share {bins[k]/tot:.4f} excess/unit {exb[k]/bins[k]:.4f} contrib {exb[k]/tot:.4f}")
