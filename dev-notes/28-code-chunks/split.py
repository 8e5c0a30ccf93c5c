import sys, gzip, json, pickle
sys.path.insert(0, "REPO")
from dp_vocab.research.heldout import is_held_out
tr = open("cc_train.jsonl", "w"); held = []
for line in gzip.open("codechunks2.jsonl.gz", "rt"):
    d = json.loads(line)
    if is_held_out(d["user"], 0.2): held.append(d["text"])
    else: tr.write(line)
pickle.dump(held, open("cc_held.pkl", "wb")); print(len(held))
