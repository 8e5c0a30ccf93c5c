import json, pickle, sys
from collections import Counter
from tokenizers import Tokenizer
priv = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json")
occ = Counter(); capped = {k: Counter() for k in (2, 4, 8)}
for line in open(sys.argv[2]):
    t = json.loads(line)["text"]
    c = Counter(u for u, _ in priv.pre_tokenizer.pre_tokenize_str(t))
    occ.update(c)
    for k in capped:
        capped[k].update({u: min(n, k) for u, n in c.items()})
pickle.dump((occ, capped), open(sys.argv[3], "wb"))
print(len(occ), sum(occ.values()))
