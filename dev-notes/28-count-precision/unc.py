"""Re-export a saved release with trained.UNCOVERED changed (NON-PRIVATE dev analysis).
python unc.py OUT BASE HELD MODEL U[,U]"""
import sys, pickle
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf, model = sys.argv[1:5]; Us = [float(u) for u in sys.argv[5].split(",")]
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
for U in Us:
    trained.UNCOVERED = U
    tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {model} U={U:g}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}% (base {100*b['unknown_rate']:.3f}%)", flush=True)
