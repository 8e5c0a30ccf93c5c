import os
import wordfreq, unicodedata, pickle, time
from collections import Counter, defaultdict
t=time.time()
per = {}
for lang in sorted(wordfreq.available_languages()):
    c = Counter()
    for w, f in wordfreq.get_frequency_dict(lang).items():
        w = unicodedata.normalize("NFKC", w).lower()
        for ch in w:
            c[ch] += f
    tot = sum(c.values())
    per[lang] = {ch: v / tot for ch, v in c.items()}
    print(lang, len(c), f"{time.time()-t:.0f}s", flush=True)
mx = Counter(); sm = Counter()
for lang, d in per.items():
    for ch, p in d.items():
        mx[ch] = max(mx[ch], p); sm[ch] += p
pickle.dump({"per": per, "max": mx, "sum": sm}, open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "wb"))
print(len(mx))
