import os
import sys, json, pickle
sys.path.insert(0, os.environ["SCRATCH"])
from surgery import load, isolated_fn
from tokenizers import Tokenizer
from dp_vocab.research.heldout import tokenizer_scores
tok, held = load(sys.argv[1], sys.argv[2]); np_tpw = float(sys.argv[3])
users = pickle.load(open(os.path.join(os.environ["SCRATCH"], "pypi.pkl"), "rb"))["users"]
iso = isolated_fn(tok)
for T in (5, 2):
    spec = json.loads(tok.to_str()); v = spec["model"]["vocab"]
    for ch in sorted(c for c, u in users.items() if u >= T):
        for p in ((ch,) if iso(ch) else (ch, "##" + ch)):
            if p not in v: v[p] = len(v)
    t = Tokenizer.from_str(json.dumps(spec)); s = tokenizer_scores(t, held)
    print(f"T={T} no drop: size {len(v)} tokens/word {s['tokens_per_word']:.4f} (x{s['tokens_per_word']/np_tpw:.4f}) unk {100*s['unknown_rate']:.3f}%", flush=True)
