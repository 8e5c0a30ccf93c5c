"""NON-PRIVATE dev: tokens/word and [UNK] of a private WordPiece after vocabulary surgery:
dead ##c (c isolated by the pre-tokenizer) removed, chars added (isolated: start form only),
last-learned multi-char pieces dropped to keep the size."""
import os
import json, sys, pickle
from tokenizers import Tokenizer
from dp_vocab.research.heldout import tokenizer_scores

def load(tok_path, split):
    tok = Tokenizer.from_file(tok_path); held = pickle.load(open(split, "rb"))[1]
    return tok, held

def isolated_fn(tok):
    pre = tok.pre_tokenizer
    cache = {}
    def iso(ch):
        if ch not in cache: cache[ch] = len(pre.pre_tokenize_str("a" + ch + "a")) == 3
        return cache[ch]
    return iso

def surgery(tok, chars, reclaim=True):
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]; size = len(vocab)
    special = {t["content"] for t in spec["added_tokens"]}
    iso = isolated_fn(tok)
    tokens = sorted(vocab, key=vocab.__getitem__)
    if reclaim:
        tokens = [t for t in tokens if not (t.startswith("##") and len(t) == 3 and iso(t[2]))]
    have = set(tokens)
    missing = []
    for ch in sorted(chars):
        for p in ((ch,) if iso(ch) else (ch, "##" + ch)):
            if p not in have: missing.append(p); have.add(p)
    over = len(tokens) + len(missing) - size
    removable = [i for i in range(len(tokens) - 1, -1, -1) if tokens[i] not in special and len(tokens[i].removeprefix("##")) > 1]
    drop = set(removable[:max(0, over)])
    kept = [t for i, t in enumerate(tokens) if i not in drop] + missing
    spec["model"]["vocab"] = {t: i for i, t in enumerate(kept)}
    return Tokenizer.from_str(json.dumps(spec)), len(missing)

if __name__ == "__main__":
    tok, held = load(sys.argv[1], sys.argv[2])
    np_tpw = float(sys.argv[3])
    users = pickle.load(open(os.path.join(os.environ["SCRATCH"], "pypi.pkl"), "rb"))["users"] if "pypi" in sys.argv[2] else None
    pub = pickle.load(open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "rb"))["max"]
    rank = [ch for ch, _ in pub.most_common()]
    def show(name, chars, reclaim=True):
        t, n = surgery(tok, chars, reclaim)
        s = tokenizer_scores(t, held)
        print(f"{name:28} +{n:5} entries: tokens/word {s['tokens_per_word']:.4f} (x{s['tokens_per_word']/np_tpw:.4f}) unk {100*s['unknown_rate']:.3f}%", flush=True)
    show("as is", set(), False)
    show("reclaim dead ##", set())
    for arg in sys.argv[4:]:
        kind, n = arg.split("=")
        if kind == "T":
            show(arg, {ch for ch, u in users.items() if u >= int(n)})
        elif kind == "pub":
            show(arg, set(rank[:int(n)]))
