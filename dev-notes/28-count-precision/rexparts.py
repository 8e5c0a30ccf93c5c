"""Re-export a saved byte-level BPE release with the _parts items' counts (one character outside ASCII, or
two characters of an unspaced script, no space marker) scaled (NON-PRIVATE dev analysis: exact, same release).
python rexparts.py OUT BASE HELD V[,V]   V: one=K (lone characters x K), pair=K, both=K, floor (lone at the floor)"""
import sys, pickle
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
from dp_vocab.export import hf
from dp_vocab.export.trained import count_floor
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf = sys.argv[1:4]; Vs = sys.argv[4].split(",")
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
dec = ByteLevel()
orig = hf.HFTokenizerExporter.training_units
floor = count_floor(rel)
for V in Vs:
    kind, _, k = V.partition("=")
    K = float(k) if k else 0.0
    def tu(self, release, words, items, kind=kind, K=K):
        u = orig(self, release, words, items)
        out = {}
        for w, c in u.items():
            t = dec.decode([w])
            one = len(t) == 1 and not t.isascii()
            pair = len(t) == 2 and not t.isascii() and all(ord(ch) > 0x2E80 for ch in t)
            if (one and kind in ("one", "both")) or (pair and kind in ("pair", "both")):
                c = max(floor, c * K)
            elif one and kind == "floor":
                c = floor
            out[w] = c
        return out
    hf.HFTokenizerExporter.training_units = tu
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {V}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
