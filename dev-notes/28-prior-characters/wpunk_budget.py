import sys, pickle, unicodedata
from collections import Counter
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
from dp_vocab import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS
import dp_vocab.export.hf as H
import os
NC = int(os.environ.get("NC", "800"))
for k in dir(H):
    c = getattr(H, k)
    if isinstance(c, type) and hasattr(c, "_new_characters"): c._new_characters = lambda self: NC
if __name__ == "__main__":
    held = pickle.load(open("SCRATCH_PREV/pypi.pkl", "rb"))
    out = sys.argv[1]
    if len(sys.argv) > 2:
        run_recipe(str(PRESETS / "private-wordpiece.cfg"), out, force=True,
                   overrides={"paths.corpus": "SCRATCH_PREV/pypi_train.jsonl", "budget.epsilon": 3.0,
                              "export.vocab_size": 32000, "run.seed": 1})
    tok = Tokenizer.from_file(out + "/hf/tokenizer.json")
    vocab = tok.get_vocab()
    words = 0; unk = 0; chars = Counter(); scripts = Counter()
    for t in held[::3]:
        norm = tok.normalizer.normalize_str(t)
        for w, _ in tok.pre_tokenizer.pre_tokenize_str(norm):
            words += 1
            if tok.model.tokenize(w)[0].value == "[UNK]":
                unk += 1
                miss = [c for c in w if c not in vocab and "##" + c not in vocab]
                for c in set(miss): chars[c] += 1
                sc = {unicodedata.name(c, "?").split()[0] for c in miss}
                scripts[" ".join(sorted(sc))] += 1
    print("pretok words", words, "unk", unk, unk / words)
    print(scripts.most_common(20))
    print(chars.most_common(60))
