"""Unigram reddit: run recipe with overrides; held-out excess by class of metaspace unit."""
import sys, pickle, json, os
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
import polars as pl
pass
tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
held = pickle.load(open("SCRATCH_PREV/reddit_ug_tab.pkl", "rb"))["held"]
r = run_recipe(str(PRESETS / "private-unigram.cfg"), f"SCRATCH/outu_{tag}", force=True,
               overrides={"paths.corpus": "SCRATCH_PREV/train.jsonl", "budget.epsilon": 3.0,
                          "export.vocab_size": 32000, "run.seed": 1, **ovr})
priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
norm, pre = priv.normalizer, priv.pre_tokenizer
def units(t):
    return [u for u, _ in pre.pre_tokenize_str(norm.normalize_str(t))]
if not Path("ug_users.pkl").exists():
    train = pl.read_ndjson("SCRATCH_PREV/train.jsonl")
    users = Counter()
    for user, ts in train.group_by("user").agg("text").iter_rows():
        s = set()
        for t in ts: s.update(units(t))
        users.update(s)
    pickle.dump(users, open("ug_users.pkl", "wb"))
    base = nonprivate_tokenizer(priv, train["text"].to_list(), 32000); base.save("base_ug.json")
users = pickle.load(open("ug_users.pkl", "rb")); base = Tokenizer.from_file("base_ug.json")
rel = set(r.release.items)
s = tokenizer_scores(priv, held)
print(f"{tag}: released {len(rel)} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/0.9659:.4f}")
def kind(u):
    w = u.lstrip("▁")
    if w.isalpha(): return "alpha"
    if w[:-1].isalpha() and w[-1] in ".,": return "alpha+.,"
    if any(c.isalpha() for c in w): return "alpha+other"
    if any(c.isdigit() for c in w): return "digits"
    return "symbols"
cls_tok = Counter(); cls_n = Counter(); tail = Counter()
for t in held[::4]:
    for u in units(t):
        n = users.get(u, 0)
        c = ("released" if u in rel else ("tail>=20" if n >= 20 else ("tail1-19" if n else "unseen"))) + "/" + kind(u)
        if c.startswith("tail>=20"): tail[u] += 1
        cls_n[c] += 1
        cls_tok[c, "p"] += len(priv.model.tokenize(u))
        cls_tok[c, "b"] += len(base.model.tokenize(u))
tot = sum(cls_n.values())
for c in sorted(cls_n):
    print(f"  {c:22} share {cls_n[c]/tot:.4f} priv {cls_tok[c,'p']/cls_n[c]:.3f} base {cls_tok[c,'b']/cls_n[c]:.3f} excess {(cls_tok[c,'p']-cls_tok[c,'b'])/tot:.4f}")
print("  ", [(u, n, users[u]) for u, n in tail.most_common(60)])
