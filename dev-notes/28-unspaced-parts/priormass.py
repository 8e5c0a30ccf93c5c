import json, sys
from dp_vocab.export.hf import HFTokenizerExporter, _byte_level_text
d = sys.argv[1]
counts = {json.loads(l)["item"]: json.loads(l)["noisy_count"] for l in open(d + "/vocab.jsonl")}
rec = json.load(open(d + "/privacy.json"))
sigma = 567.554 if len(sys.argv) < 3 else float(sys.argv[2])
items = {"tokenizer": "hf_pre_tokenizer", "kind": "byte_level_parts", "nfkc": False, "lowercase": False}
ex = HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior="wordfreq:en")
rel = {u: max(float(c), sigma) for u, c in counts.items()}
full = ex.public_prior.fill(rel, ex._normalizer_and_pre_tokenizer(items), 4000, _byte_level_text)
T = sum(rel.values()); Pm = sum(v for u, v in full.items() if u not in rel)
print(f"released {len(rel)} mass {T:.3g}; prior units {len(full)-len(rel)} mass {Pm:.3g} ({Pm/T:.3%} of released); at cap {sum(1 for u,v in full.items() if u not in rel and v >= sigma-1e-9)}")
