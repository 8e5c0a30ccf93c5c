"""patch: the public prior also adds each word's unspaced forms (w, W) at the release's own shares."""
import os
from dp_vocab.export import trained
_fill = trained.PublicPrior.fill
def fill(self, units, units_of, new_characters):
    out = _fill(self, units, units_of, new_characters)
    if not out or not os.environ.get("PFORMS"):
        return out
    mark = units_of(" a")[0][:-1]
    if not mark:
        return out
    def kind(u):
        if u.startswith(mark):
            return "sp" if u[len(mark):].isalpha() else None
        if u.isalpha():
            return "cap" if u[0].isupper() else "low"
        return None
    tot = {"sp": 0.0, "cap": 0.0, "low": 0.0}
    for u, c in units.items():
        k = kind(u)
        if k and c > 0: tot[k] += c
    sh = {k: tot[k] / tot["sp"] for k in ("cap", "low")} if tot["sp"] else {}
    print("shares", sh, flush=True)
    alphabet = {ch for u in out for ch in u}
    add = {}
    for word, f in self.frequencies():
        sp = units_of(" " + word)
        if len(sp) != 1 or sp[0] not in out: continue
        c = out[sp[0]]
        for form, k in ((word, "low"), (word[:1].upper() + word[1:], "cap")):
            made = units_of(form)
            if len(made) == 1 and made[0] not in out and made[0] not in add and alphabet.issuperset(made[0]):
                add[made[0]] = max(1.0, c * sh[k])
    out.update(add)
    return out
trained.PublicPrior.fill = fill
