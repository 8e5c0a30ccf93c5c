"""Re-export a saved BPE release with the script lists not scaled by the usage ratio (NON-PRIVATE dev analysis).
python rexscr.py OUT BASE same,scripts"""
import sys, os, pickle, string
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.export.trained import PublicPrior, word_forms, _new_characters, usage_ratio
from dp_vocab.research.heldout import tokenizer_scores

def fill(self, units, units_of, new_characters, text_of=None, every_script_word=False):
    out = {u: float(c) for u, c in units.items() if c > 0}
    words = self.frequencies()
    listed = [(units_of(" " + word), f) for word, f in words]
    alphabet = {ch for u in out for ch in u} | set("".join(units_of(" " + string.printable.strip())))
    total, smallest = sum(out.values()), min(out.values())
    tables = [(listed, share) if form is None else ([(units_of(form(word)), f) for word, f in words], share)
              for form, share in word_forms(out, units_of)]
    scripts = self.script_lists(out, units_of, text_of or (lambda u: u))
    own = max(0.0, 1.0 - sum(share for _, share in scripts))
    alphabet |= _new_characters([(listed, own), *scripts], alphabet, new_characters)
    if every_script_word:
        tables, scripts = tables + scripts, []
    p_own, p_scr = Counter(), Counter()
    for i, (made_of, share) in enumerate(tables + scripts):
        target = p_own if i < len(tables) else p_scr
        for made, f in made_of:
            if alphabet.issuperset("".join(made)):
                for unit in made:
                    target[unit] += f * share
    usage = usage_ratio({u: f * total for u, f in p_own.items()}, out, smallest)
    print("   usage", round(usage, 4), "script units", len(p_scr), flush=True)
    for unit in set(p_own) | set(p_scr):
        if unit in out:
            continue
        count = min(smallest, usage * min(smallest, p_own[unit] * total) + min(smallest, p_scr[unit] * total))
        if count >= 1.0 or unit in p_own:
            out[unit] = max(1.0, count)
    return out

out, basef, vs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
held = pickle.load(open(os.environ.get("HELD", "SCRATCH_PREV/pypi.pkl"), "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
orig = PublicPrior.fill
for v in vs:
    PublicPrior.fill = fill if v == "scripts" else orig
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {v}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
