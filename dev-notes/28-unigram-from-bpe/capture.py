"""Capture (release, words, items, exporter) at the export of a recipe run on reddit 80% (seed 1)."""
import sys, pickle, json
from pathlib import Path
import os; sys.path.insert(0, os.environ.get("REPO", "REPO")); sys.path.insert(0, "REPO/benchmarks")
from dp_vocab.export import hf
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
box = {}
def main():
    model, eps = sys.argv[1], float(sys.argv[2])
    global box
    orig = hf.HFTokenizerExporter._trained_model
    def cap(self, release, words, items):
        box["x"] = (release, words, items)
        return orig(self, release, words, items)
    hf.HFTokenizerExporter._trained_model = cap
    r = run_recipe(str(PRESETS / f"private-{model}.cfg"), f"SCRATCH/out_{model}", force=True,
                   overrides={"paths.corpus": "SCRATCH/train.jsonl", "budget.epsilon": eps,
                              "export.vocab_size": 32000, "run.seed": 1, **json.loads(os.environ.get("OVR", "{}"))})
    pickle.dump(box["x"], open(f"cap_{model}_{eps}{os.environ.get('TAG', '')}.pkl", "wb"))

if __name__ == '__main__':
    main()
