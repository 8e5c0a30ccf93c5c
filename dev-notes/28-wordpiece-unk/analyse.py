"""#28 NON-PRIVATE dev analysis: which characters would fix the held-out [UNK]s of private-wordpiece.
usage: analyse.py CORPUS PRIVATE_TOKENIZER_JSON OUT.pkl"""
import os
import sys, json, pickle, unicodedata, time
from pathlib import Path
from collections import Counter
sys.path.insert(0, os.path.join(os.environ["REPO"], "benchmarks"))
from bench_tokenizers import load
from tokenizers import Tokenizer
from dp_vocab.research.heldout import tokenizer_scores
from dp_vocab.export.trained import _with_every_character

corpus, tok_path, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
t0 = time.time()
train, held = load(corpus, 0.2)
tok = Tokenizer.from_file(tok_path)
norm = tok.normalizer
# user-level character counts over training users (after the exported normaliser)
users = Counter()
for user, texts in train.group_by("user").agg("text").iter_rows():
    s = set()
    for t in texts:
        s.update(norm.normalize_str(t))
    users.update(ch for ch in s if not ch.isspace())
print("training users", train["user"].n_unique(), "distinct chars", len(users), f"{time.time()-t0:.0f}s", flush=True)
vocab = tok.get_vocab()
spec = json.loads(tok.to_str())
special = {t["content"] for t in spec["added_tokens"]}
have = {ch for ch in users if ch in vocab and "##" + ch in vocab}
# held-out unknown occurrences: per held-out pre-token that is UNK, its characters without both pieces
occ = Counter()
for t in held:
    for w, _ in tok.pre_tokenizer.pre_tokenize_str(norm.normalize_str(t)):
        ids = tok.model.tokenize(w)
        if any(x.value == "[UNK]" for x in ids):
            for ch in set(w):
                if not (ch in vocab and "##" + ch in vocab):
                    occ[ch] += 1
held_unk_chars = occ
base = tokenizer_scores(tok, held)
print("base", base, flush=True)

def with_chars(chars):
    v = _with_every_character(dict(vocab), sorted(chars), special, len(vocab), "##")
    s = json.loads(tok.to_str()); s["model"]["vocab"] = v
    return Tokenizer.from_str(json.dumps(s))

res = {"base": base, "users": users, "occ": occ}
# user counts of the held-out unknown characters
by_users = Counter()
for ch, n in occ.items():
    u = users.get(ch, 0)
    b = next(x for x in (0, 1, 2, 5, 10, 20, 40, 80, 160, 10**9) if u <= x)
    by_users[b] += n
print("held-out unknown char occurrences by training users holding the char (≤bucket):", sorted(by_users.items()), flush=True)
for T in (5, 10, 20, 40, 80):
    add = {ch for ch, u in users.items() if u >= T} - have
    sc = tokenizer_scores(with_chars(add), held)
    res[T] = (len(add), sc)
    print(f"T={T}: +{len(add)} chars, {sc}", flush=True)
pickle.dump(res, open(out, "wb"))
