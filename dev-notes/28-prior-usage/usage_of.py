import sys, json
from dp_vocab.export import trained
from rex import load
from dp_vocab.export.hf import HFTokenizerExporter
orig = trained.usage_ratio
def spy(pred, rel, m):
    r = orig(pred, rel, m); n = sum(p >= trained.USAGE_FROM * m for p in pred.values())
    print(f"usage ratio {r:.3f} over {n} units (m {m:.4g})"); return r
trained.usage_ratio = spy
rel, items = load(sys.argv[1])
model = sys.argv[2] if len(sys.argv) > 2 else "bpe"
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
HFTokenizerExporter(model=model, style=style, vocab_size=8000, public_prior="wordfreq:en").build(rel, items)
