"""Re-export a saved Unigram release with its one-character items changed (NON-PRIVATE dev analysis).
python rexug.py OUT BASE VARIANT[,VARIANT]; variants: same, drop (one-character non-ASCII items left out),
floor (their counts set to the smallest released count)"""
import sys, json, pickle, os
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.research.heldout import tokenizer_scores
from dp_vocab.data.release import Release
out, basef, vs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
held = pickle.load(open(os.environ.get("HELD", "SCRATCH_PREV/pypi.pkl"), "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
one = [u for u in rel.counts if len(u) == 1 and ord(u) > 127]
print(out, "one-character items", len(one), "of", len(rel.counts), flush=True)
for v in vs:
    counts = dict(rel.counts)
    if v == "drop":
        for u in one: counts.pop(u)
    elif v == "floor":
        m = min(c for c in counts.values() if c > 0)
        for u in one: counts[u] = m
    r2 = Release(items=sorted(counts), mechanism=rel.mechanism, params={}, epsilon=3, delta=1e-5,
                 randomness={}, privacy={}, counts=counts, counts_info=rel.counts_info)
    tok = HFTokenizerExporter(model=os.environ.get("MODEL","unigram"), style=os.environ.get("STYLE","sentencepiece"), vocab_size=32000, public_prior="wordfreq:en").build(r2, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {v}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}%", flush=True)
