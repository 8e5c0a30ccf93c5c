"""WordPiece excess by kind of held-out BERT unit (NON-PRIVATE dev analysis)."""
import pickle, sys, os, unicodedata
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab.export.trained import _first_words
held = pickle.load(open(os.environ.get("HELD", "SCRATCH_PREV/pypi.pkl"), "rb"))
priv = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json")
base = Tokenizer.from_file(sys.argv[2])
en = {w for w, f in _first_words("en", 150000)}
langs = ["es", "pt", "fr", "de", "it", "nl", "tr", "pl", "id", "vi"]
other = {l: {w for w, f in _first_words(l, 50000)} for l in langs}
pv, bv = priv.get_vocab(), base.get_vocab()
def script(c):
    try: return unicodedata.name(c).split()[0]
    except ValueError: return "?"
def cat(t):
    wide = [c for c in t if ord(c) > 0x24F and c.isalpha()]
    if wide: return "script:" + script(wide[0])
    if any(c.isdigit() for c in t): return "digit"
    if not any(c.isalpha() for c in t): return "punct"
    lo = t.lower()
    if lo in en: return "en"
    for l in langs:
        if lo in other[l]: return "lang"
    if t[1:] != t[1:].lower(): return "camel/caps"
    return "alpha-other"
n = Counter(); tp = Counter(); tb = Counter(); up = Counter(); ub = Counter()
for t in held[::4]:
    s = priv.normalizer.normalize_str(t) if priv.normalizer else t
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(s):
        c = cat(u); a = priv.model.tokenize(u); b = base.model.tokenize(u)
        n[c] += 1; tp[c] += len(a); tb[c] += len(b)
        up[c] += any(x.value == "[UNK]" for x in a); ub[c] += any(x.value == "[UNK]" for x in b)
tot = sum(n.values())
for k in sorted(n, key=lambda k: -(tp[k] - tb[k]))[:25]:
    print(f"  {k:24} share {n[k]/tot:.5f} priv {tp[k]/n[k]:.3f} base {tb[k]/n[k]:.3f} excess {(tp[k]-tb[k])/tot:.5f} unk {up[k]} / {ub[k]}")
print("total", (sum(tp.values()) - sum(tb.values())) / tot, "units", tot)
