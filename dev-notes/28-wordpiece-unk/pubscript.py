import os
import pickle, unicodedata
from collections import Counter, defaultdict
def script(ch):
    n = unicodedata.name(ch, "")
    if not n: return "?"
    w = n.split()[0]
    if w in ("HIRAGANA", "KATAKANA"): return "KANA"
    return w
if __name__ == '__main__':
    pub = pickle.load(open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "rb"))
    per = pub["per"]
    # per script: pooled share over languages where the script has >= 50% of the char mass
    by = defaultdict(Counter)
    for lang, d in per.items():
        sm = Counter()
        for ch, p in d.items(): sm[script(ch)] += p
        main = sm.most_common(1)[0][0]
        for ch, p in d.items():
            by[script(ch)][ch] += p
    for s, c in sorted(by.items(), key=lambda kv: -len(kv[1]))[:15]:
        tot = sum(c.values()); acc = 0; marks = {}
        for i, (ch, p) in enumerate(c.most_common(), 1):
            acc += p
            for q in (0.99, 0.999, 0.9999):
                if q not in marks and acc >= q * tot: marks[q] = i
        print(s, len(c), marks)
