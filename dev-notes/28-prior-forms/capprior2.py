"""patch: prior holds each listed word in each case (low, Cap, UP) x {marked, unmarked}, at the release's shares."""
import os, re
from dp_vocab.export import trained
_fill = trained.PublicPrior.fill
MODE = os.environ.get("CAP", "")
def fill(self, units, units_of, new_characters):
    out = _fill(self, units, units_of, new_characters)
    if not MODE:
        return out
    a, A = units_of(" a"), units_of(" A")
    if len(a) != 1:
        return out
    mark = a[0][:-1]
    cased = a != A
    def kind(u):
        m = bool(mark) and u.startswith(mark)
        s = u[len(mark):] if m else u
        if not s or not s.isalpha():
            return None
        if s.islower(): c = "low"
        elif s[0].isupper() and s[1:].islower(): c = "cap"
        elif len(s) > 1 and s.isupper(): c = "up"
        else: return None
        return (m, c)
    tot = {}
    for u, c in units.items():
        k = kind(u)
        if k and c > 0: tot[k] = tot.get(k, 0.0) + c
    base = tot.get((True, "low"), 0.0)
    if not base: return out
    shares = {k: v / base for k, v in tot.items() if k != (True, "low")}
    if not cased: shares = {k: v for k, v in shares.items() if k[1] == "low"}
    if "nobare" in MODE: shares = {k: v for k, v in shares.items() if k[0]}
    norm = 1.0 + sum(shares.values()) if "norm" in MODE else 1.0
    if "norm" in MODE:
        for k in list(shares): shares[k] /= norm
        sc = 1.0 / norm
        for w in list(out):
            if w not in units: out[w] = max(1.0, out[w] * sc)
    print("shares", shares, flush=True)
    total, smallest = sum(v for v in units.values() if v > 0), min(v for v in units.values() if v > 0)
    alphabet = {ch for u in out for ch in u}
    n = 0
    for word, f in self.frequencies():
        for (m, c), share in shares.items():
            form = word if c == "low" else (word[:1].upper() + word[1:] if c == "cap" else word.upper())
            made = units_of((" " if m else "") + form)
            if len(made) == 1 and made[0] not in out and alphabet.issuperset(made[0]):
                out[made[0]] = min(smallest, max(1.0, f * total * share)); n += 1
    print("forms", n, flush=True)
    return out
trained.PublicPrior.fill = fill
