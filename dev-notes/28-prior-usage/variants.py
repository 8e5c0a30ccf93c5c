import math, string, os
from collections import Counter
from dp_vocab.export import trained, hf
from dp_vocab.export.trained import word_forms, _new_characters

MODE = {}

def fill(self, units, units_of, new_characters, text_of=None):
    out = {u: float(c) for u, c in units.items() if c > 0}
    if not out:
        return out
    words = self.frequencies()
    listed = [(units_of(" " + word), f) for word, f in words]
    alphabet = {ch for u in out for ch in u} | set("".join(units_of(" " + string.printable.strip())))
    total, smallest = sum(out.values()), min(out.values())
    tables = [(listed, share) if form is None else ([(units_of(form(word)), f) for word, f in words], share)
              for form, share in word_forms(out, units_of)]
    scripts = self.script_lists(out, units_of, text_of or (lambda u: u))
    own = max(0.0, 1.0 - sum(share for _, share in scripts))
    alphabet |= _new_characters([(listed, own), *scripts], alphabet, new_characters)
    tables += scripts
    prior = Counter()
    for made_of, share in tables:
        for made, f in made_of:
            if alphabet.issuperset("".join(made)):
                for unit in made:
                    prior[unit] += f * share
    # band profile: p / m in log2 bands
    band = lambda p: max(-4, min(8, math.floor(math.log2(p / smallest)))) if p > 0 else -4
    nb = Counter(); rb = Counter(); mb = Counter()
    for unit, f in prior.items():
        p = f * total; b = band(p); nb[b] += 1; mb[b] += min(smallest, p)
        if unit in out: rb[b] += 1
    if MODE.get("prof"):
        for b in sorted(nb):
            print(f"    band 2^{b}: listed {nb[b]} released {rb[b]} ({rb[b]/nb[b]:.2f}) unreleased mass {mb[b]-0:.3g}")
        print(f"    released total {total:.4g} smallest {smallest:.4g}")
    if MODE.get("xstat"):
        import numpy as np
        for lo in (0, 2, 3, 4, 5):
            xs = [out[u] / (f * total) for u, f in prior.items() if f * total >= (2 ** lo) * smallest and u in out]
            nn = sum(1 for u, f in prior.items() if f * total >= (2 ** lo) * smallest)
            cs = sum(out[u] for u, f in prior.items() if f * total >= (2 ** lo) * smallest and u in out)
            ps = sum(f * total for u, f in prior.items() if f * total >= (2 ** lo) * smallest)
            print(f"    p>=2^{lo}m: n {nn} rel {len(xs)} median X {np.median(xs):.3f} (with unrel as 0: {np.median(xs + [0]*(nn-len(xs))):.3f}) mean {np.mean(xs):.3f} sum c/sum p {cs/ps:.3f}")
    top = [b for b in nb if b >= 3]
    q = sum(rb[b] for b in top) / max(1, sum(nb[b] for b in top))
    k = MODE.get("scale", 1.0)
    if MODE.get("med"):
        import numpy as np
        lo = float(MODE.get("lo", 8))
        xs = [out.get(u, 0.0) / (f * total) for u, f in prior.items() if f * total >= lo * smallest]
        k = min(1.0, float(np.median(xs))) if len(xs) >= 100 else 1.0
        print(f"    med factor {k:.3f} over {len(xs)}")
    added = 0.0
    for unit, f in prior.items():
        if unit in out:
            continue
        p = f * total
        w = min(smallest, max(1.0, p))
        if MODE.get("drop") and p > smallest:
            continue
        if MODE.get("post"):
            b = band(p); R = rb[b] / nb[b]
            post = max(0.0, (q - R) / (1 - R)) if R < 1 else 0.0
            w = min(smallest, max(1.0, p * post))
            if p * post < 1 and MODE.get("post") == "strict":
                continue
        if MODE.get("hionly") and p <= smallest:
            w = min(smallest, max(1.0, p))
        elif MODE.get("loonly") and p > smallest:
            w = min(smallest, max(1.0, p))
        elif MODE.get("med") == "before":
            w = min(smallest, max(1.0, k * p))
        else:
            w *= k
        out[unit] = w; added += w
    if MODE.get("prof"):
        print(f"    q {q:.3f} prior added {added:.4g} = {added/total:.3f} of released")
    return out

def apply(v):
    saved = []
    def patch(mod, name, val):
        saved.append((mod, name, getattr(mod, name))); setattr(mod, name, val)
    MODE.clear(); MODE["prof"] = bool(os.environ.get("PROF"))
    if v == "noprior":
        patch(trained.PublicPrior, "fill", lambda self, units, *a, **k: dict(units))
    elif v.startswith("floor"):
        k = float(v[5:]); orig = trained.count_floor
        patch(hf, "count_floor", lambda release: k * orig(release))
    elif v == "dropzero":
        def tc(counts, max_words, resolution=100.0):
            positive = {u: float(c) for u, c in counts.items() if c > 0 and u and not trained._SPACE.search(u)}
            total, smallest = sum(positive.values()), min(positive.values())
            scale = min(max_words / total, max(1.0, resolution / smallest))
            out = {u: round(c * scale) for u, c in positive.items()}
            print("    dropped", sum(1 for c in out.values() if c == 0), "of", len(out), "scale", scale)
            return {u: c for u, c in out.items() if c > 0}
        patch(hf, "training_counts", tc)
    elif v.startswith("words"):
        k = int(float(v[5:]))
        orig = hf.training_counts
        patch(hf, "training_counts", lambda counts, max_words, resolution=100.0: orig(counts, k, resolution))
    elif v != "none":
        patch(trained.PublicPrior, "fill", fill)
        for part in v.split("+"):
            if part.startswith("x") and part != "xstat": MODE["scale"] = float(part[1:])
            elif part: MODE[part.split("=")[0]] = part.split("=")[1] if "=" in part else True
    def undo():
        for mod, name, val in reversed(saved): setattr(mod, name, val)
    return undo
