"""Prototype: P gains "▁w," "▁w." "▁(w" forms of its Metaspace letter units, each form of the
entry at rank i placed after rank K*i (Zipf: a mark following ~1/K of a word's uses)."""
import os, sys, runpy, itertools
from dp_vocab.mechanisms import public_list as PL
K = int(os.environ.get("K", "20"))
MARKS = os.environ.get("MARKS", ",|.|(").split("|")
_orig = PL.PublicDomain.normalised_from.__func__
def nf(cls, source, extractor, limit, raw):
    out = _orig(cls, source, extractor, limit, raw)
    if extractor(" a") != ["\u2581a"]:
        return out
    items = list(out.items)
    forms = []   # (position, form)
    for i, w in enumerate(items):
        if w.startswith("\u2581") and w[1:].isalpha():
            for m in MARKS:
                f = "\u2581" + m + w[1:] if m == "(" else w + m
                forms.append((K * i, f))
    have = set(items)
    merged = []; j = 0
    for i, w in enumerate(items):
        merged.append(w)
        while j < len(forms) and forms[j][0] <= i:
            if forms[j][1] not in have:
                merged.append(forms[j][1]); have.add(forms[j][1])
            j += 1
    merged = merged[:limit]
    print("P", len(items), "->", len(merged), "forms in", len(merged) - len(set(merged) & set(items)), file=sys.stderr)
    return cls(tuple(merged), out.source, True)
PL.PublicDomain.normalised_from = classmethod(nf)
sys.argv = ["anau.py"] + sys.argv[1:]
runpy.run_path("anau.py", run_name="__main__")
