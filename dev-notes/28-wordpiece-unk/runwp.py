"""bench_tokenizers.py (wordpiece only) keeping the private tokenizer and caching the non-private baseline.
usage: runwp.py CORPUS TAG [KEY=VALUE ...]"""
import os
import sys, json, time, pickle, shutil
from pathlib import Path
sys.path.insert(0, os.path.join(os.environ["REPO"], "benchmarks"))
from bench_tokenizers import load
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
from dp_vocab.ingest.corpora.bundled import PRESETS
from dp_vocab.recipes import parse_override_value
def main():
    corpus, tag = Path(sys.argv[1]), sys.argv[2]
    ov = {k: parse_override_value(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])}
    D = Path(os.environ["SCRATCH"]); name = corpus.name.split(".")[0]
    split = D / f"{name}_split.pkl"
    if split.exists():
        train_path, held, texts = pickle.load(open(split, "rb"))
    else:
        train, held = load(corpus, 0.2)
        train_path = str(D / f"{name}_train.jsonl"); train.write_ndjson(train_path)
        texts = train["text"].to_list()
        pickle.dump((train_path, held, texts), open(split, "wb"))
    t = time.perf_counter()
    r = run_recipe(str(PRESETS / "private-wordpiece.cfg"), D / f"out_{name}_{tag}", force=True,
                   overrides={"paths.corpus": train_path, "budget.epsilon": 3.0,
                              "export.vocab_size": 32000, "run.seed": 1, **ov})
    run_s = time.perf_counter() - t
    priv = Tokenizer.from_file(str(r.output / "hf" / "tokenizer.json"))
    sc = tokenizer_scores(priv, held)
    bl = D / f"{name}_baseline.json"
    if bl.exists():
        base = json.load(open(bl))
    else:
        base = tokenizer_scores(nonprivate_tokenizer(priv, texts, 32000), held)
        json.dump(base, open(bl, "w"))
    print(f"{name} {tag}: size {priv.get_vocab_size()} tokens/word {sc['tokens_per_word']:.4f} unk {100*sc['unknown_rate']:.3f}% | "
          f"non-private {base['tokens_per_word']:.4f} unk {100*base['unknown_rate']:.3f}% | ratio x{sc['tokens_per_word']/base['tokens_per_word']:.4f} | run {run_s:.0f}s", flush=True)

if __name__ == '__main__':
    main()
