import json, sys
from dp_vocab.export.trained import _first_words
from dp_vocab.ingest.text.tokenizers import byte_level
d = sys.argv[1]; sigma = float(sys.argv[2])
counts = {json.loads(l)["item"]: json.loads(l)["noisy_count"] for l in open(d + "/vocab.jsonl")}
T = sum(max(c, sigma) for c in counts.values())
words = _first_words("en", 150000)
for lo in [1, 2, 4, 8, 16, 32, 64, 128]:
    sel = [(w, f) for w, f in words if lo * sigma <= f * T < 2 * lo * sigma]
    rel = sum(1 for w, f in sel if byte_level(" " + w) in counts or byte_level(" " + w.capitalize()) in counts or byte_level(w) in counts)
    print(f"f·T in [{lo},{2*lo})σ: {len(sel)} words, released {rel/ max(1,len(sel)):.3f}")
