import sys, json
sys.path.insert(0, "SCRATCH")
from rex import load
import dp_vocab.export.hf as hf
from dp_vocab.export.hf import HFTokenizerExporter
cap = {}
TABS = {}
orig = hf.train_model
def spy(model, units, *a, **k):
    cap["units"] = units; return orig(model, units, *a, **k)
hf.train_model = spy
for o in sys.argv[1:]:
    rel, items = load(o)
    tok = HFTokenizerExporter(model="unigram", style="sentencepiece", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    u = cap["units"]; R = set(rel.items); v = tok.get_vocab()
    tot = sum(u.values()); rc = [c for k, c in u.items() if k in R]; rtot = sum(rc); mr = min(rc)
    print(o, "table units", len(u), "released in table", len(rc), "total", tot, "released share %.4f" % (rtot / tot),
          "min released", mr, "median released", sorted(rc)[len(rc)//2],
          "prior >= min released", sum(1 for k, c in u.items() if k not in R and c >= mr),
          "vocab", len(v), "released whole", sum(k in v for k in R), "table units in vocab", sum(k in v for k in u), flush=True)
    TABS[o] = (dict(u), R)
    missing = sorted(((u[k], k) for k in R if k in u and k not in v), reverse=True)[:15]
    print("  top released not whole", missing, flush=True)

import unicodedata, collections
def script(w):
    for ch in w:
        if ch.isalpha():
            return unicodedata.name(ch, "?").split()[0]
    return "none"
names = list(TABS)
a = TABS[names[0]][0]
for o in names[1:]:
    b, R = TABS[o]
    extra = [k for k in b if k not in a]; gone = [k for k in a if k not in b]
    print(o, "extra units vs", names[0], len(extra), collections.Counter(script(k) for k in extra).most_common(8))
    print("   gone", len(gone), collections.Counter(script(k) for k in gone).most_common(8))
    print("   released scripts", collections.Counter(script(k) for k in R).most_common(12))
print(names[0], "released scripts", collections.Counter(script(k) for k in TABS[names[0]][1]).most_common(12))
