"""run the BPE recipe on reddit 80% with overrides; held-out excess by class; top missed tail units."""
import sys, pickle, json, os
from collections import Counter
from pathlib import Path
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
from dp_vocab.export import hf
FLOOR = float(os.environ.get("FLOOR", "0"))
_tu = hf.HFTokenizerExporter.training_units
def tu(self, release, words, items):
    out = _tu(self, release, words, items)
    if FLOOR:
        f = FLOOR * release.counts_info["scale"]
        rel = set(release.items)
        out = {w: (max(c, f) if w in rel else c) for w, c in out.items()}
    return out
hf.HFTokenizerExporter.training_units = tu
tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
d = pickle.load(open("SCRATCH_PREV/reddit_bpe.pkl", "rb"))
held = d["held"]
users = pickle.load(open("bpe_users.pkl", "rb"))
r = run_recipe(str(PRESETS / "private-bpe.cfg"), f"SCRATCH/out_{tag}", force=True,
               overrides={"paths.corpus": "SCRATCH_PREV/train.jsonl", "budget.epsilon": 3.0,
                          "export.vocab_size": 32000, "run.seed": 1, **ovr})
priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
if not Path("base_bpe.json").exists():
    import polars as pl
    base = nonprivate_tokenizer(priv, pl.read_ndjson("SCRATCH_PREV/train.jsonl")["text"].to_list(), 32000)
    base.save("base_bpe.json")
base = Tokenizer.from_file("base_bpe.json")
rel = set(r.release.items)
s = tokenizer_scores(priv, held)
print(f"{tag}: released {len(rel)} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/1.0795308:.4f}")
pre = priv.pre_tokenizer
cls_tok = Counter(); cls_n = Counter(); tail = Counter()
for t in held[::4]:
    for u, _ in pre.pre_tokenize_str(t):
        n = users.get(u, 0)
        c = "released" if u in rel else ("tail>=20" if n >= 20 else ("tail1-19" if n else "unseen"))
        if c == "tail>=20": tail[u] += 1
        cls_n[c] += 1
        cls_tok[c, "p"] += len(priv.model.tokenize(u))
        cls_tok[c, "b"] += len(base.model.tokenize(u))
tot = sum(cls_n.values()); ex = sum(cls_tok[c, "p"] - cls_tok[c, "b"] for c in cls_n)
for c in sorted(cls_n):
    print(f"  {c:10} share {cls_n[c]/tot:.4f} priv {cls_tok[c,'p']/cls_n[c]:.3f} base {cls_tok[c,'b']/cls_n[c]:.3f} excess {(cls_tok[c,'p']-cls_tok[c,'b'])/tot:.4f}")
print("  ", [(u, n, users[u]) for u, n in tail.most_common(80)])
