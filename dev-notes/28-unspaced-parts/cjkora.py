"""ORACLE (NON-PRIVATE): a saved BPE release + CJK substrings (len 2..L, inside runs of Han/Kana) held by >= T
training users, at users x per-user count x W. Upper bound of sub-word statistics for CJK. python cjkora.py OUT T,.. W L"""
import sys, os, pickle, json, re
sys.path.insert(0, "SCRATCH_PREV")
import numpy as np
from collections import Counter
from rex import load
from tokenizers import Tokenizer, pre_tokenizers
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out = sys.argv[1]; Ts = [int(t) for t in sys.argv[2].split(",")]; W = float(sys.argv[3]); L = int(sys.argv[4])
rel, items = load(out)
users = pickle.load(open("pypi_users.pkl", "rb"))
per_user = np.median([c / users[u] for u, c in rel.counts.items() if users.get(u, 0) >= 20 and c > 0])
run = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
bl = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
cnt = Counter()
for line in open("pypi_train.jsonl"):
    t = json.loads(line)["text"]
    seen = set()
    for m in run.finditer(t):
        s = m.group()
        for n in range(2, L + 1):
            for i in range(len(s) - n + 1):
                seen.add(s[i:i + n])
    cnt.update(seen)
cand = {}
for s, n in cnt.items():
    u = bl.pre_tokenize_str(s)[0][0]
    if u not in rel.counts:
        cand[u] = n
print("per_user", per_user, "substrings", len(cnt), "candidates >=5", sum(n >= 5 for n in cand.values()), flush=True)
held = pickle.load(open("pypi.pkl", "rb"))
b = tokenizer_scores(Tokenizer.from_file("basep_bpe.json"), held)
EXTRA = {}
orig = trained.PublicPrior.fill
def fill(self, units, *a, **k):
    o = orig(self, units, *a, **k)
    for f, c in EXTRA.items():
        o[f] = o.get(f, 0.0) + c
    return o
trained.PublicPrior.fill = fill
for T in Ts:
    EXTRA.clear()
    if T:
        EXTRA.update({u: n * per_user * W for u, n in cand.items() if n >= T})
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} T={T} W={W} L={L}: added {len(EXTRA)} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
