"""ORACLE (NON-PRIVATE): a saved BPE release + training units not released whose text (without the space marker)
is a word of wordfreq's lists of other languages (LANGS), held by >= T users, at users x per-user count.
Upper bound of multilingual public candidates. python mlora.py OUT T[,T] LANGS"""
import sys, os, pickle, json
sys.path.insert(0, "SCRATCH_PREV")
import numpy as np, wordfreq
from rex import load
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out = sys.argv[1]; Ts = [int(t) for t in sys.argv[2].split(",")]; langs = sys.argv[3].split(",")
rel, items = load(out)
users = pickle.load(open("pypi_users.pkl", "rb"))
per_user = np.median([c / users[u] for u, c in rel.counts.items() if users.get(u, 0) >= 20 and c > 0])
dec = ByteLevel()
words = set()
if langs != ["ANY"]:
    for l in langs:
        words.update(w for w, _ in trained._first_words(l, 50000))
cand = {}
for u, n in users.items():
    if u in rel.counts: continue
    t = dec.decode([u]).lstrip(" ")
    if t.isascii(): continue
    if langs == ["ANY"] or t.lower() in words:
        cand[u] = n
print("per_user", per_user, "candidates", len(cand), flush=True)
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
        EXTRA.update({u: n * per_user for u, n in cand.items() if n >= T})
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {langs[:3]} T={T}: added {len(EXTRA)} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
