"""ORACLE (NON-PRIVATE): a saved DP release + edge fragments (prefixes and suffixes, 2..6 characters) of the
training users' tail units (units not released), kept when >= T users hold a tail unit with it; count = users x
the release's mean count per user of a released unit x WEIGHT. Upper bound of a fragment stage at threshold T.
python fragora.py OUT BASE HELD TRAIN MODEL T[,T] [WEIGHT]"""
import sys, os, pickle, json
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter
import numpy as np
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf, trainf, model = sys.argv[1:6]
Ts = [int(t) for t in sys.argv[6].split(",")]
W = float(sys.argv[7]) if len(sys.argv) > 7 else 0.2
rel, items = load(out)
priv = Tokenizer.from_file(out + "/hf/tokenizer.json")
cache = f"frag_{os.path.basename(out)}.pkl"
if os.path.exists(cache):
    fusers, uusers = pickle.load(open(cache, "rb"))
else:
    R = set(rel.counts)
    fusers = Counter(); uusers = Counter()
    norm = priv.normalizer; pre = priv.pre_tokenizer
    by = {}
    for line in open(trainf):
        d = json.loads(line); t = d["text"]
        if norm is not None: t = norm.normalize_str(t)
        by.setdefault(d["user"], set()).update(u for u, _ in pre.pre_tokenize_str(t))
    for units in by.values():
        fr = set()
        for u in units:
            uusers[u] += 1
            if u in R: continue
            L = len(u)
            for n in range(2, min(6, L) + 1):
                fr.add(u[:n]); fr.add(u[L - n:])
        fusers.update(fr)
    pickle.dump((fusers, uusers), open(cache, "wb"))
per_user = np.median([c / uusers[u] for u, c in rel.counts.items() if uusers.get(u, 0) >= 20 and c > 0])
print("mean DP count per user of a released unit (median over units):", round(per_user, 2), flush=True)
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
EXTRA = {}
orig = trained.PublicPrior.fill
def fill(self, units, *a, **k):
    o = orig(self, units, *a, **k)
    for f, c in EXTRA.items():
        o[f] = o.get(f, 0.0) + c
    return o
trained.PublicPrior.fill = fill
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
for T in [0] + Ts:
    EXTRA.clear()
    if T:
        EXTRA.update({f: n * per_user * W for f, n in fusers.items() if n >= T})
    tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} T={T} W={W}: fragments {len(EXTRA)} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}%", flush=True)
