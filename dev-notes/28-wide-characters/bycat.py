"""pypi BPE excess by kind of held-out unit (NON-PRIVATE dev analysis)."""
import pickle, sys, os, re, unicodedata
from collections import Counter
from tokenizers import Tokenizer
import wordfreq
from dp_vocab.export.trained import _first_words
BY_SCRIPT = bool(os.environ.get("BY_SCRIPT"))
held = pickle.load(open(os.environ.get("HELD", "pypi.pkl"), "rb"))
priv = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json")
base = Tokenizer.from_file(os.environ.get("BASE", "basep_bpe.json"))
en = {w for w, f in _first_words("en", 150000)}
langs = ["es", "pt", "fr", "de", "it", "nl", "tr", "pl", "id", "vi", "ca", "sv"]
other = {l: {w for w, f in _first_words(l, 50000)} for l in langs}
bl = priv.pre_tokenizer
from tokenizers.decoders import ByteLevel
dec = ByteLevel()
def cat(u):
    t = dec.decode([u]).strip()
    if not t: return "space"
    sc = {unicodedata.name(c, "?").split(" ")[0] for c in t if ord(c) > 0x24F and c.isalpha()}
    if sc:   # env BY_SCRIPT=1: one class per script (every 2nd document instead of every 4th)
        return "nl:" + "+".join(sorted(sc)) if BY_SCRIPT else "nonlatin"
    if any(c.isdigit() for c in t): return "digit"
    if not any(c.isalpha() for c in t): return "punct"
    if not t.isalpha(): return "mixed"
    lo = t.lower()
    if lo in en: return "en"
    for l in langs:
        if lo in other[l]: return "lang:" + l
    if t[1:] != t[1:].lower(): return "camel/caps"
    return "alpha-other"
n = Counter(); tp = Counter(); tb = Counter()
for t in held[::2 if BY_SCRIPT else 4]:
    for u, _ in bl.pre_tokenize_str(t):
        c = cat(u); a, b = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
        n[c] += 1; tp[c] += a; tb[c] += b
tot = sum(n.values())
for k in sorted(n, key=lambda k: -(tp[k] - tb[k])):
    print(f"  {k:12} share {n[k]/tot:.4f} priv {tp[k]/n[k]:.3f} base {tb[k]/n[k]:.3f} excess {(tp[k]-tb[k])/tot:.4f}")
print("total", (sum(tp.values()) - sum(tb.values())) / tot)
