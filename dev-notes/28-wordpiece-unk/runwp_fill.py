"""runwp.py with an EXPERIMENTAL public character fill (monkeypatched, not in the library):
usage: runwp_fill.py CORPUS TAG N  -- adds public chars (wordfreq, all languages, max share rank)
of the scripts holding >= 3 distinct characters of the training units, up to N new entries."""
import os
import sys, pickle
from collections import Counter
sys.path.insert(0, os.environ["SCRATCH"])
import runwp
from pubscript import script
from dp_vocab.export import hf

orig = hf.HFTokenizerExporter._alphabet_for_training
pub = [ch for ch, _ in pickle.load(open(os.path.join(os.environ["SCRATCH"], "public_chars.pkl"), "rb"))["max"].most_common()]

def patched(self, units, items):
    alphabet = orig(self, units, items)
    if self.model != "wordpiece":
        return alphabet
    rel = Counter(script(ch) for ch in {c for u in units for c in u} if ord(ch) > 127)
    present = {s for s, n in rel.items() if n >= 3}
    pre = self._pre_tokenizer(items)
    have = set(alphabet); cost = 0; add = []
    for ch in pub:
        if ch in have or script(ch) not in present: continue
        c = 1 if len(pre.pre_tokenize_str(f"a{ch}a")) == 3 else 2
        if cost + c > N: break
        cost += c; add.append(ch)
    print(f"fill: scripts {sorted(present)}, +{len(add)} chars, {cost} entries", flush=True)
    return sorted(have | set(add))

hf.HFTokenizerExporter._alphabet_for_training = patched
if __name__ == "__main__":
    N = int(sys.argv.pop(3))
    runwp.main()
