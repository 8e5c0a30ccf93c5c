"""FEASIBILITY (NON-PRIVATE scoring): the selection's own noisy weights as a second count estimate.
Recomputes the policy weights H of policy_gaussian_public for a saved run (same recipe, overrides, seed
-> same key and bounding), draws H' = H + N(0, sigma_sel^2) (fresh, as the run's own noise would be),
maps H' to the count scale by r = sum(y_c) / sum(H') over released units clearly below their cutoff,
and combines r H' with the count stage's y_c by inverse variance for those units.
python selcnt.py OUT TRAIN HELD BASE EPS"""
import sys, pickle, json
sys.path.insert(0, "SCRATCH_PREV")
import numpy as np
from rex import load
from tokenizers import Tokenizer
from dp_vocab.recipes import plan_run
from dp_vocab.backends import make_backend
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
out, trainf, heldf, basef, eps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
plan = plan_run(str(PRESETS / "private-bpe.cfg"), "SCRATCH/selcnt_out", force=True,
                overrides={"paths.corpus": trainf, "budget.epsilon": eps, "export.vocab_size": 32000, "run.seed": 1})
m = plan.mechanism
backend = make_backend(plan.run)
data = backend.load(plan.reader, plan.extractor, False, None)
key = RandomSource(1).key()
h = m.for_data(data)._histogram(data, key)
names = h.names_at(np.arange(len(h.weights)))
H = dict(zip(names, h.weights)); R = dict(zip(names, h.ranks))
sig = m.noise_scale
print("sigma_sel", sig, "cutoff outside", m.cutoff, "public", m.public_gamma, flush=True)
rel, items = load(out)
yc = dict(rel.counts); sc = rel.counts_info["scale"]
rng = np.random.default_rng(7)
units = [u for u in yc if u in H]
Hn = {u: H[u] + rng.normal(0, sig) for u in units}
gam = {u: (m.public_gamma if R[u] >= 0 else m.cutoff) for u in units}
below = [u for u in units if Hn[u] < gam[u] - 2 * sig]
r = sum(yc[u] for u in below) / sum(Hn[u] for u in below)
print("units", len(yc), "with H", len(units), "below cutoff - 2 sigma", len(below), "r", r, "r sigma_sel", r * sig, "sigma_c", sc, flush=True)
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
for mode in ["none", "combine", "selonly"]:
    c = dict(yc)
    if mode != "none":
        vs, vc = (r * sig) ** 2, sc ** 2
        for u in below:
            est = r * Hn[u]
            c[u] = max(0, round(est if mode == "selonly" else (est / vs + yc[u] / vc) / (1 / vs + 1 / vc)))
    rel.counts.clear(); rel.counts.update(c)
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {mode}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
