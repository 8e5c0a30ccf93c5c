"""SIMULATION (NON-PRIVATE): counts with public per-item weights a_j inside each user's L2 normalisation
(a_j = A for units in P's first BAND entries, 1 otherwise): y_j = sum_u 100 a_j / ||a . v_u|| + N(0, sigma^2),
estimate y_j / a_j; ASCII released units only (others keep their DP counts), fresh noise of the release's sigma.
python wcnt.py OUT TRAIN HELD BASE BAND A[,A] SEEDS"""
import sys, pickle, json, math
import numpy as np
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter, defaultdict
from rex import load
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
from dp_vocab.recipes import plan_run
from dp_vocab.ingest.corpora.bundled import PRESETS
out, trainf, heldf, basef = sys.argv[1:5]; band = int(sys.argv[5]); As = [float(a) for a in sys.argv[6].split(",")]
seeds = [int(s) for s in sys.argv[7].split(",")]
plan = plan_run(str(PRESETS / "private-bpe.cfg"), "SCRATCH/wcnt_out", force=True, overrides={"paths.corpus": trainf})
rank = {w: i for i, w in enumerate(plan.mechanism.domain.items[:band])}
rel, items = load(out)
priv = Tokenizer.from_file(out + "/hf/tokenizer.json")
R = set(rel.counts); dec = ByteLevel()
by = defaultdict(Counter)
for line in open(trainf):
    d = json.loads(line)
    by[d["user"]].update(u for u, _ in priv.pre_tokenizer.pre_tokenize_str(d["text"]) if u in R)
sets = [[u for u, _ in c.most_common(1000)] for c in by.values() if c]
print("users", len(sets), "released in band", sum(1 for u in R if u in rank), flush=True)
noisy = dict(rel.counts); sigma = rel.counts_info["scale"]
asc = [u for u in noisy if dec.decode([u]).isascii()]
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
for A in As:
    exact = Counter()
    for s in sets:
        a = [A if u in rank else 1.0 for u in s]
        norm = math.sqrt(sum(x * x for x in a))
        for u, x in zip(s, a):
            exact[u] += 100 * x / norm
    for seed in seeds:
        rng = np.random.default_rng(seed)
        a_of = {u: (A if u in rank else 1.0) for u in asc}
        c = dict(noisy)
        c.update({u: max(0, round((exact[u] + rng.normal(0, sigma)) / a_of[u])) for u in asc})
        rel.counts.clear(); rel.counts.update(c)
        tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
        s = tokenizer_scores(tok, held)
        print(f"{out} band {band} A={A} seed {seed}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
