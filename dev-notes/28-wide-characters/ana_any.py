"""ratio of a private recipe to the cached non-private tokenizer (NON-PRIVATE dev analysis).
env MODEL, TRAIN, HELD, CORP (tag for the base cache), SEED; argv TAG EPS"""
import sys, pickle, json, os
from pathlib import Path
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import tokenizer_scores, nonprivate_tokenizer
tag, eps = sys.argv[1], float(sys.argv[2])
model = os.environ.get("MODEL", "bpe"); corp = os.environ.get("CORP", "p")
S42 = "SCRATCH_PREV/"
train = os.environ.get("TRAIN", S42 + "pypi_train.jsonl"); held = pickle.load(open(os.environ.get("HELD", S42 + "pypi.pkl"), "rb"))
r = run_recipe(str(PRESETS / f"private-{model}.cfg"), f"SCRATCH/out_{tag}", force=True,
               overrides={"paths.corpus": train, "budget.epsilon": eps, "export.vocab_size": 32000,
                          "run.seed": int(os.environ.get("SEED", 1))})
priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
bp = Path(f"SCRATCH/base_{corp}_{model}.json")
if not bp.exists():
    import polars as pl
    texts = [json.loads(l)["text"] for l in open(train)]
    nonprivate_tokenizer(priv, texts, 32000).save(str(bp))
base = Tokenizer.from_file(str(bp))
s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
print(f"{tag} {model} eps {eps}: released {len(r.release.items)} size {priv.get_vocab_size()} tpw {s['tokens_per_word']:.4f} "
      f"base {b['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {s['unknown_rate']*100:.3f}% base unk {b['unknown_rate']*100:.3f}%", flush=True)
