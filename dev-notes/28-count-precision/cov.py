"""Re-export a saved release with the prior's new characters chosen by character coverage (SentencePiece's
character_coverage), or by word share U (NON-PRIVATE dev analysis). python cov.py OUT BASE HELD MODEL V[,V]
V: c0.9995 (coverage of the expected characters) or w1e-5 (share of words, as shipped)"""
import sys, pickle
sys.path.insert(0, "SCRATCH_PREV")
from collections import Counter
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf, model = sys.argv[1:5]; Vs = sys.argv[5].split(",")
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
orig = trained._new_characters
def by_chars(cov):
    def f(lists, alphabet, most):
        weight = Counter(); total = 0.0
        for made_of, share in lists:
            for made, fr in made_of:
                text = "".join(made)
                total += fr * share * len(text)
                for ch in text:
                    if ch not in alphabet:
                        weight[ch] += fr * share
        order = trained._most_first(weight)[:max(0, most)]
        left = sum(weight.values()); k = 0
        while k < len(order) and left > (1 - cov) * total:
            left -= order[k][1]; k += 1
        f.n = k
        return {ch for ch, _ in order[:k]}
    return f
for V in Vs:
    if V[0] == "c":
        trained._new_characters = by_chars(float(V[1:]))
    else:
        trained._new_characters = orig; trained.UNCOVERED = float(V[1:])
    tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {model} {V}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}% new {getattr(trained._new_characters, 'n', '-')}", flush=True)
