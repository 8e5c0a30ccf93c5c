import sys, pickle, time, os
sys.path.insert(0, "REPO")
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
model, eps, k = sys.argv[1], sys.argv[2], float(sys.argv[3])
rel, words, items = pickle.load(open(f"cap_{model}_{eps}.pkl", "rb"))
held = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))["held"]
BASE = {"unigram": 0.9659, "bpe": 1.0782}[model]
style = {"unigram": "sentencepiece", "bpe": "gpt2"}[model]
import builtins
real_min = builtins.min
# patch: prior count = min(k*smallest, f*total)
src = open("REPO/dp_vocab/export/trained.py").read()
src = src.replace("out[made[0]] = min(smallest, max(1.0, f * total))", "out[made[0]] = min(K * smallest, max(1.0, f * total))")
assert "K * smallest" in src
trained.K = k
exec(compile(src, trained.__file__, "exec"), trained.__dict__)
hf.PublicPrior = trained.PublicPrior; hf.train_model = trained.train_model
ex = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en")
tok = ex.build(rel, items)
s = tokenizer_scores(tok, held)
print(f"{model} eps{eps} K={k}: size {tok.get_vocab_size()} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/BASE:.4f}", flush=True)
