"""Re-export saved releases with prior variants; exact comparisons (NON-PRIVATE dev analysis).
python rex45.py MODEL BASE OUT[,OUT] VARIANT[,VARIANT]; variants: shipped | none (this copy of fill, one ratio) |
per_list (each list its own usage ratio) | scripts_u1 (script lists at ratio 1); env VERBOSE=1 prints the ratios"""
import sys, os, pickle
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.export.trained import usage_ratio, _new_characters, word_forms, Counter, string
from dp_vocab.research.heldout import tokenizer_scores

VARIANT = {"v": "none"}

def fill(self, units, units_of, new_characters, text_of=None, every_script_word=False):
    v = VARIANT["v"]
    out = {u: float(c) for u, c in units.items() if c > 0}
    if not out:
        return out
    words = self.frequencies()
    listed = [(units_of(" " + word), f) for word, f in words]
    alphabet = {ch for u in out for ch in u} | set("".join(units_of(" " + string.printable.strip())))
    total, smallest = sum(out.values()), min(out.values())
    tables = [(listed, share) if form is None else ([(units_of(form(word)), f) for word, f in words], share)
              for form, share in word_forms(out, units_of)]
    scripts = self.script_lists(out, units_of, text_of or (lambda u: u))
    own = max(0.0, 1.0 - sum(share for _, share in scripts))
    alphabet |= _new_characters([(listed, own), *scripts], alphabet, new_characters)
    # one prior per list: the own language's tables, then each script list
    groups = [tables] + [[s] for s in scripts]
    priors = []
    for g in groups:
        p = Counter()
        for made_of, share in g:
            for made, f in made_of:
                if alphabet.issuperset("".join(made)):
                    for unit in made:
                        p[unit] += f * share
        priors.append(p)
    entering = priors if every_script_word else priors[:1]   # units entered at 1 or more
    prior = Counter()
    for p in priors:
        prior.update(p)
    if v == "per_list":
        ratios = [usage_ratio({u: f * total for u, f in p.items()}, out, smallest) for p in priors]
    elif v == "scripts_u1":   # the English ratio for the own list, 1 for every script list
        ratios = [usage_ratio({u: f * total for u, f in prior.items()}, out, smallest)] + [1.0] * (len(priors) - 1)
    else:
        r = usage_ratio({u: f * total for u, f in prior.items()}, out, smallest)
        ratios = [r] * len(priors)
    if os.environ.get("VERBOSE"):
        print("  ratios", [round(r, 3) for r in ratios], flush=True)
    for unit, f in prior.items():
        if unit not in out:
            r = max(ratios[i] for i, p in enumerate(priors) if unit in p)
            count = r * min(smallest, f * total)
            if count >= 1.0 or any(unit in p for p in entering):
                out[unit] = max(1.0, count)
    return out

def main():
    model, basef, outs, vs = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
    style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
    held = pickle.load(open(os.environ.get("HELD", "SCRATCH_PREV/pypi.pkl"), "rb"))
    b = tokenizer_scores(Tokenizer.from_file(basef), held)
    orig = trained.PublicPrior.fill
    for out in outs:
        rel, items = load(out)
        for v in vs:
            VARIANT["v"] = v
            trained.PublicPrior.fill = orig if v == "shipped" else fill
            tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
            s = tokenizer_scores(tok, held)
            print(f"{out} {v}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}%", flush=True)
    trained.PublicPrior.fill = orig

if __name__ == "__main__":
    main()
