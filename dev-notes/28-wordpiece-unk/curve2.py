import os
import json, re, sys, pickle, unicodedata
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab.research.heldout import WORD_PATTERN
sys.path.insert(0, os.environ["SCRATCH"])
from pubscript import script
tok = Tokenizer.from_file(sys.argv[1]); held = pickle.load(open(sys.argv[2], "rb"))[1]
v = tok.get_vocab(); norm, pre = tok.normalizer, tok.pre_tokenizer
words = sum(len(re.findall(WORD_PATTERN, t)) for t in held)
miss = Counter()
for t in held:
    for w, _ in pre.pre_tokenize_str(norm.normalize_str(t)):
        if any(x.value == "[UNK]" for x in tok.model.tokenize(w)):
            miss[frozenset(ch for ch in w if ch not in v or "##" + ch not in v)] += 1
def iso(ch): return len(pre.pre_tokenize_str("a" + ch + "a")) == 3
users = pickle.load(open(os.path.join(os.environ["SCRATCH"], "pypi.pkl"), "rb"))["users"]
# scripts held by >= S training users (oracle view of scripts)
import polars as pl
pub = pickle.load(open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "rb"))
scr_users = Counter()
for ch, u in users.items(): scr_users[script(ch)] = max(scr_users[script(ch)], u)
def run(name, order):
    added = set(); cost = 0; marks = [1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000]
    for ch in order:
        cost += (ch not in v) + ((not iso(ch)) and ("##" + ch not in v)); added.add(ch)
        if marks and cost >= marks[0]:
            left = sum(n for m, n in miss.items() if not m <= added)
            print(name, f"entries {cost}: unk {100*left/words:.3f}%", flush=True); marks.pop(0)
rank = [ch for ch, _ in pub["max"].most_common()]
print("scripts by max user count of a char:", [(s, u) for s, u in scr_users.most_common(20)])
for S in (50, 200):
    present = {s for s, u in scr_users.items() if u >= S}
    run(f"pub-in-scripts(S={S})", [ch for ch in rank if script(ch) in present])
# oracle order: training user count
run("oracle-users", [ch for ch, _ in users.most_common()])
