"""Prototype: metaspace items plus 'lead parts' ([marks]*[alnum]+ segments) of each unit."""
import re, sys, runpy, os
from dp_vocab.ingest.text import tokenizers as T
SEG = re.compile(r"[^\w\u2581]*[^\W_]+|[^\w\u2581]+$")
SEG2 = re.compile(r"[^\w\u2581]*[^\W_]+(?:[^\w\u2581]+$)?|[^\w\u2581]+$")
MODE = os.environ.get("PARTS", "lead")
_orig = T.HFPreTokenizer.__call__
def parts(u):
    mark = "\u2581" if u.startswith("\u2581") else ""
    body = u[len(mark):]
    if MODE == "lead":
        segs = SEG.findall(body)
    elif MODE == "lead3":
        segs = SEG.findall(body) if len(SEG2.findall(body)) > 1 else []
    else:
        segs = SEG2.findall(body)
    if len(segs) <= 1 or "".join(segs) != body:
        return []
    segs[0] = mark + segs[0]
    return segs
def call(self, text):
    units = _orig(self, text)
    if self.kind != "metaspace":
        return units
    out = list(units)
    for u in units:
        out.extend(parts(u))
    return out
T.HFPreTokenizer.__call__ = call
if os.environ.get("UNM"):
    from dp_vocab.export import trained as TR
    _am = TR._after_marks
    BARE = re.compile(r"[^\w\s\u2581]+[^\W\d_]+")
    def am(unit, marker):
        return _am(unit, marker) or BARE.fullmatch(unit) is not None
    TR._after_marks = am
if __name__ == "__main__":
    print(parts("\u2581https://www.youtube.com/watch?v=nRPX"), parts("\u2581need-based"), parts("\u2581etc)"), parts("\u2581(it's"), parts("\u2581word"))
    sys.argv = ["anau.py"] + sys.argv[1:]
    runpy.run_path("anau.py", run_name="__main__")
