"""pypi: run the BPE recipe on the 80% split with overrides; held-out excess by class."""
import sys, pickle, json, os
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO"); sys.path.insert(0, "REPO/benchmarks")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
import polars as pl
sys.path.insert(0, "."); import pforms
tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
if not Path("pypi.pkl").exists():
    from bench_tokenizers import load
    train, held = load(Path("CORPORA/pypi_summaries.jsonl.gz"), 0.2)
    train.write_ndjson("pypi_train.jsonl")
    pickle.dump(held, open("pypi.pkl", "wb"))
held = pickle.load(open("pypi.pkl", "rb"))
r = run_recipe(str(PRESETS / "private-bpe.cfg"), f"SCRATCH/outp_{tag}", force=True,
               overrides={"paths.corpus": "pypi_train.jsonl", "budget.epsilon": 3.0,
                          "export.vocab_size": 32000, "run.seed": 1, **ovr})
priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
pre = priv.pre_tokenizer
if not Path("basep_bpe.json").exists():
    texts = pl.read_ndjson("pypi_train.jsonl")["text"].to_list()
    base = nonprivate_tokenizer(priv, texts, 32000); base.save("basep_bpe.json")
    users = Counter()
    for t in texts:
        users.update(set(u for u, _ in pre.pre_tokenize_str(t)))
    pickle.dump(users, open("pypi_users.pkl", "wb"))
base = Tokenizer.from_file("basep_bpe.json"); users = pickle.load(open("pypi_users.pkl", "rb"))
rel = set(r.release.items)
s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
print(f"{tag}: released {len(rel)} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}")
cls_tok = Counter(); cls_n = Counter(); tail = Counter(); unseen = Counter()
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(t):
        n = users.get(u, 0)
        c = "released" if u in rel else ("tail>=20" if n >= 20 else ("tail1-19" if n else "unseen"))
        if c == "tail>=20": tail[u] += 1
        if c == "unseen": unseen[u] += 1
        cls_n[c] += 1
        cls_tok[c, "p"] += len(priv.model.tokenize(u))
        cls_tok[c, "b"] += len(base.model.tokenize(u))
tot = sum(cls_n.values())
for c in sorted(cls_n):
    print(f"  {c:10} share {cls_n[c]/tot:.4f} priv {cls_tok[c,'p']/cls_n[c]:.3f} base {cls_tok[c,'b']/cls_n[c]:.3f} excess {(cls_tok[c,'p']-cls_tok[c,'b'])/tot:.4f}")
print("  ", [(u, n, users[u]) for u, n in tail.most_common(60)])
print("  ", unseen.most_common(40))
