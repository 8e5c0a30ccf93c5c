"""ORACLE (NON-PRIVATE): the released ASCII units' counts recomputed without noise about as the counts stage
does (each user's released pre-tokenizer units, up to 1000, one each, L2-normalised to 100; the _parts items
are left out, so units outside ASCII keep their DP counts). python exactcnt.py OUT TRAIN HELD BASE K[,K]
K in [0, 1]: exact + K (noisy - exact); K < 0: exact + fresh noise of the release's scale (seed -K);
K >= 100: exact only for the units whose exact count is under K; K = -99: only the noise's sd (exact vs DP)."""
import sys, pickle, json, math
import numpy as np
from tokenizers.decoders import ByteLevel
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter, defaultdict
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
out, trainf, heldf, basef = sys.argv[1:5]; Ks = [float(k) for k in sys.argv[5].split(",")]
rel, items = load(out)
priv = Tokenizer.from_file(out + "/hf/tokenizer.json")
R = set(rel.counts)
by = defaultdict(Counter)
for line in open(trainf):
    d = json.loads(line)
    by[d["user"]].update(u for u, _ in priv.pre_tokenizer.pre_tokenize_str(d["text"]) if u in R)
exact = Counter()
for c in by.values():
    held = [u for u, _ in c.most_common(1000)]
    if held:
        w = 100 / math.sqrt(len(held))
        for u in held: exact[u] += w
noisy = dict(rel.counts)
_dec = ByteLevel()
ASC = lambda u: _dec.decode([u]).isascii()
d = np.array([noisy[u] - exact[u] for u in noisy if ASC(u)])
print("noise sd", d.std(), "mean", d.mean(), "mad-sd", 1.4826*np.median(np.abs(d-np.median(d))), json.load(open(out + "/privacy.json"))["noisy_counts"]["scale"], flush=True)
if Ks == [-99]: sys.exit()
print('released ASCII units under 1443 / 4810:', sum(1 for u in noisy if ASC(u) and exact[u] < 1443), sum(1 for u in noisy if ASC(u) and exact[u] < 4810), flush=True)
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
sigma = rel.counts_info["scale"]
for K in Ks:
    rng = np.random.default_rng(int(-K) if K < 0 else 0)
    if K >= 100:  # exact only for units whose exact count is under K
        rel.counts.clear(); rel.counts.update({u: (round(exact[u]) if ASC(u) and exact[u] < K else c) for u, c in noisy.items()})
    elif K < 0:  # exact + fresh noise of the release's scale, seed -K
        rel.counts.clear(); rel.counts.update({u: (max(0, round(exact[u] + rng.normal(0, sigma))) if ASC(u) else c) for u, c in noisy.items()})
    else:
        rel.counts.clear(); rel.counts.update({u: (round(exact[u] + K * (c - exact[u])) if ASC(u) else c) for u, c in noisy.items()})
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} K={K}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
