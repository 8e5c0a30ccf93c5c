"""patch: table also holds unmarked letter units 'w' at the release's share of letter runs after a non-letter."""
import os, re
from dp_vocab.export import hf, trained
_wtm = trained.with_trailing_marks
LEAD = re.compile(r"^▁[^\w\s▁]+[^\W\d_]+$")
def wtm(units, released, units_of):
    out = _wtm(units, released, units_of)
    if not os.environ.get("LEAD"):
        return out
    word = units_of(" a")
    if len(word) != 1 or word[0] == "a":
        return out
    mark = word[0][:-1]
    bare = sum(c for u, c in released.items() if c > 0 and trained._letters(u))
    led = sum(c for u, c in released.items() if c > 0 and LEAD.match(u))
    share = led / bare if bare else 0
    print("lead share", share, flush=True)
    for u, c in list(units.items()):
        if c > 0 and trained._letters(u) and u.startswith(mark):
            out.setdefault(u[len(mark):], max(1.0, c * share * float(os.environ.get("LEADX", "1"))))
    return out
hf.with_trailing_marks = wtm
