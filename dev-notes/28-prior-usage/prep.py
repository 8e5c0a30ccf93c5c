"""pypi 80/20 split, held-out texts, non-private BPE (32k) and training users per unit."""
import sys, pickle
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO/benchmarks")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer
from bench_tokenizers import load
train, held = load(Path("CORPORA/pypi_summaries.jsonl.gz"), 0.2)
train.write_ndjson("pypi_train.jsonl"); pickle.dump(held, open("pypi.pkl", "wb"))
r = run_recipe(str(PRESETS / "private-bpe.cfg"), "tmpl", force=True, overrides={"run.seed": 1})
tmpl = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
texts = train["text"].to_list()
base = nonprivate_tokenizer(tmpl, texts, 32000); base.save("basep_bpe.json")
users = Counter(); pre = tmpl.pre_tokenizer
for u, t in zip(train["user"].to_list(), texts):
    pass
by = {}
for u, t in zip(train["user"].to_list(), texts):
    by.setdefault(u, set()).update(x for x, _ in pre.pre_tokenize_str(t))
for s in by.values(): users.update(s)
pickle.dump(users, open("pypi_users.pkl", "wb"))
print("done", len(texts), len(by))
