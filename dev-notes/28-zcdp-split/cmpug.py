import pickle, sys, json
from collections import Counter
from tokenizers import Tokenizer
held = pickle.load(open("reddit.pkl", "rb"))
a = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json"); b = Tokenizer.from_file(sys.argv[2] + "/hf/tokenizer.json")
ra = {json.loads(l)["item"] for l in open(sys.argv[1] + "/vocab.jsonl")}; rb = {json.loads(l)["item"] for l in open(sys.argv[2] + "/vocab.jsonl")}
diff = Counter(); n = 0; cls = Counter(); clsn = Counter()
for t in held[::8]:
    e1 = a.encode(t); e2 = b.encode(t)
    n += 1
    # per pre-token unit
    for (u, _) in a.pre_tokenizer.pre_tokenize_str(a.normalizer.normalize_str(t) if a.normalizer else t):
        x = len(a.model.tokenize(u)); y = len(b.model.tokenize(u))
        k = ("A" if u in ra else "-") + ("B" if u in rb else "-")
        cls[k] += y - x; clsn[k] += 1
        if x != y: diff[(u, x, y)] += 1
print("units by released in A/B: count, extra tokens in B", {k: (clsn[k], cls[k]) for k in clsn})
worse = sorted(((c * (k[2] - k[1]), k) for k, c in diff.items()), reverse=True)[:40]
better = sorted(((c * (k[2] - k[1]), k) for k, c in diff.items()))[:20]
print("B worse:", worse); print("B better:", better)
