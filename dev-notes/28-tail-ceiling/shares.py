"""Script shares and script-list units kept by the prior on a saved release (NON-PRIVATE dev analysis)."""
import sys
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter
from rex import load
from dp_vocab.export import hf, trained
rel, items = load(sys.argv[1])
model = sys.argv[2] if len(sys.argv) > 2 else "bpe"
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
ex = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en")
orig_sl = trained.PublicPrior.script_lists
def sl(self, released, units_of, text_of):
    out = orig_sl(self, released, units_of, text_of)
    T = sum(c for c in released.values() if c > 0); m = min(c for c in released.values() if c > 0)
    print("released units", len(released), "total", round(T), "smallest", m)
    for made_of, share in out:
        fs = sorted((f for _, f in made_of), reverse=True)
        n1 = sum(1 for f in fs if f * share * T * 0.1 >= 1)
        print(f"  share {share:.2e} words {len(fs)} top f {fs[0]:.4f}; count>=1 at usage 1: {sum(1 for f in fs if f*share*T>=1)}, at 0.1: {n1}")
    return out
trained.PublicPrior.script_lists = sl
orig_u = trained.usage_ratio
def ur(*a):
    r = orig_u(*a); print("usage", r); return r
trained.usage_ratio = ur
tok = ex.build(rel, items)
v = tok.get_vocab()
from dp_vocab.export.hf import _byte_level_text
sc = Counter()
for t in v:
    s = _byte_level_text(t) if model == "bpe" else t
    for ch in set(s):
        name = trained._script_language(ch)
        if name: sc[name] += 1; break
print("vocab tokens by script language:", dict(sc))
