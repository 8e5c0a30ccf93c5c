"""Re-export a saved release with its noisy counts denoised by Tweedie's formula (empirical Bayes):
E[x | y] = y + sigma^2 (log f)'(y), f the density of the released noisy counts (Gaussian kernel, bandwidth H sigma).
Post-processing of the release (NON-PRIVATE only in the scoring). python tweedie.py OUT BASE HELD MODEL H[,H]"""
import sys, pickle, json
sys.path.insert(0, "SCRATCH_PREV")
import numpy as np
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf, model = sys.argv[1:5]; Hs = [float(h) for h in sys.argv[5].split(",")]
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
sigma = rel.counts_info["scale"]
noisy = dict(rel.counts)
units = list(noisy); y = np.array([noisy[u] for u in units], float)
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
def tweedie(y, h):
    pos = y[y > 0]
    grid = np.linspace(0, np.quantile(pos, 0.999) + 10 * sigma, 4000)
    step = grid[1] - grid[0]
    hist, _ = np.histogram(pos, bins=len(grid), range=(grid[0] - step / 2, grid[-1] + step / 2))
    bw = h * sigma
    k = np.exp(-0.5 * ((np.arange(-int(4 * bw / step) - 1, int(4 * bw / step) + 2) * step) / bw) ** 2)
    f = np.convolve(hist, k, mode="same") + 1e-12
    score = np.gradient(np.log(f), step)
    s = np.interp(np.clip(y, grid[0], grid[-1]), grid, score)
    return np.where(y > 0, np.maximum(0, y + sigma ** 2 * s), 0)
for H in Hs:
    x = y if H == 0 else tweedie(y, H)
    rel.counts.clear(); rel.counts.update({u: round(v) for u, v in zip(units, x)})
    small = y < 5 * sigma
    print(f"H={H}: mean shift of counts under 5 sigma {np.mean(x[small] - y[small]):.0f}, over {np.mean(x[~small] - y[~small]):.0f}", flush=True)
    tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {model} H={H}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}%", flush=True)
