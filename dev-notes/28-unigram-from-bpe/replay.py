import sys, pickle, time
import os; sys.path.insert(0, os.environ.get("REPO", "REPO"))
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
model, eps, variant = sys.argv[1], sys.argv[2], sys.argv[3]
rel, words, items = pickle.load(open(f"cap_{model}_{eps}{os.environ.get('TAG', '')}.pkl", "rb"))
held = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))["held"]
BASE = {"unigram": 0.9659, "bpe": 1.0782}[model]
style = {"unigram": "sentencepiece", "bpe": "gpt2"}[model]
orig_fill = trained.PublicPrior.fill
import os
FORMS = [tuple(x.split("@")) for x in os.environ.get("FORMS", "{}.@1").split(";")]
FORMS = [(a, float(b)) for a, b in FORMS]
def fill_caps(self, units, units_of, new_characters, c=float(variant[4:] or 0) if variant.startswith("caps") else 0):
    out = orig_fill(self, units, units_of, new_characters)
    if not out: return out
    total = sum(v for k, v in units.items() if v > 0)
    smallest = min(v for v in units.values() if v > 0)
    alphabet = {ch for u in out for ch in u}
    for word, f in self.frequencies():
        for form, share in FORMS:
            made = units_of(" " + (word[:1].upper() + word[1:] if form == "Cap" else form.format(word)))
            if len(made) == 1 and made[0] not in out and alphabet.issuperset(made[0]):
                out[made[0]] = min(smallest, max(1.0, f * total * c * share))
    return out
if variant.startswith("caps"):
    trained.PublicPrior.fill = fill_caps
ex = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en")
t = time.process_time()
tok = ex.build(rel, items)
cpu = time.process_time() - t
s = tokenizer_scores(tok, held)
print(f"{model} eps{eps} {variant}: size {tok.get_vocab_size()} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/BASE:.4f} cpu {cpu:.0f}", flush=True)
