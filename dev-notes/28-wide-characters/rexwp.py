"""Re-export a saved WordPiece release with the prior's character budget changed (NON-PRIVATE dev analysis).
python rexwp.py OUT BASE VARIANT[,VARIANT]: same; total (vocab/8 less the released characters outside ASCII)"""
import sys, json, pickle, os
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
out, basef, vs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
held = pickle.load(open(os.environ.get("HELD", "SCRATCH_PREV/pypi.pkl"), "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
wide = {ch for u in rel.counts for ch in u if ord(ch) > 127}
print(out, "released characters outside ASCII", len(wide), flush=True)
orig = hf.HFTokenizerExporter._new_characters
for v in vs:
    if v == "total":
        hf.HFTokenizerExporter._new_characters = lambda self: max(0, orig(self) - len(wide))
    else:
        hf.HFTokenizerExporter._new_characters = orig
    tok = hf.HFTokenizerExporter(model="wordpiece", style="bert", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    v1 = tok.get_vocab()
    print(f"{out} {v}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}% (base {100*b['unknown_rate']:.3f}%) one-char {sum(1 for k in v1 if len(k)==1 or (k.startswith('##') and len(k)==3))}", flush=True)
