"""pypi BPE: ratio + held-out excess by class (NON-PRIVATE dev analysis)."""
import sys, pickle, json, os
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.research.heldout import tokenizer_scores
def main():
    tag = sys.argv[1]; ovr = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    eps = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    model = os.environ.get("MODEL", "bpe")
    held = pickle.load(open(os.environ.get("HELD", "pypi.pkl"), "rb"))
    r = run_recipe(str(PRESETS / f"private-{model}.cfg"), f"out_{tag}", force=True,
                   overrides={"paths.corpus": os.environ.get("TRAIN", "pypi_train.jsonl"), "budget.epsilon": eps,
                              "export.vocab_size": 32000, "run.seed": int(os.environ.get("SEED", 1)), **ovr})
    priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
    base = Tokenizer.from_file(os.environ.get("BASE", "base_pypi_bpe.json"))
    s = tokenizer_scores(priv, held); b = tokenizer_scores(base, held)
    print(f"{tag} eps {eps}: released {len(r.release.items)} size {priv.get_vocab_size()} tpw {s['tokens_per_word']:.4f} base {b['tokens_per_word']:.4f} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {s['unknown_rate']*100:.3f}%", flush=True)
    if model != "bpe" or os.environ.get("NOCLS"):
        return
    from rex import classes   # the same split as the re-exports
    classes(priv, base, held, r.release)


if __name__ == '__main__':
    main()