"""python prep.py CORPUS NAME: the 80/20 split (NAME_train.jsonl), held-out texts (NAME.pkl), the
non-private BPE at 32k (base_NAME_bpe.json) and training users per byte-level unit (NAME_users.pkl).
Run as: prep.py CORPORA/pypi_summaries.jsonl.gz pypi, CORPORA/reddit_college.jsonl.gz reddit,
code.jsonl.gz code (after mkcode.py)."""
import sys, pickle
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO/benchmarks")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer
from bench_tokenizers import load
corpus, name = sys.argv[1], sys.argv[2]
train, held = load(Path(corpus), 0.2)
train.write_ndjson(f"{name}_train.jsonl"); pickle.dump(held, open(f"{name}.pkl", "wb"))
r = run_recipe(str(PRESETS / "private-bpe.cfg"), "tmpl", force=True, overrides={"run.seed": 1})
tmpl = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
texts = train["text"].to_list()
base = nonprivate_tokenizer(tmpl, texts, 32000); base.save(f"base_{name}_bpe.json")
users = Counter(); pre = tmpl.pre_tokenizer
by = {}
for u, t in zip(train["user"].to_list(), texts):
    by.setdefault(u, set()).update(x for x, _ in pre.pre_tokenize_str(t))
for s in by.values(): users.update(s)
pickle.dump(users, open(f"{name}_users.pkl", "wb"))
print("done", len(texts), len(by))
