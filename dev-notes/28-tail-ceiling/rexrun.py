"""Re-export saved BPE releases with runs of one character doubled in the trainer's table (NON-PRIVATE dev analysis).
python rexrun.py BASE HELD OUT[,OUT] VARIANT[,VARIANT]   variants: shipped | same | half  (+ 'p' suffix: also prefix+run)"""
import sys, os, pickle, re
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
RUN = re.compile(r"^(.?)((.)\3+)$", re.S)
MAXLEN = int(os.environ.get("MAXLEN", 128))
V = {"v": "shipped"}
orig_fill = trained.PublicPrior.fill
def fill(self, units, *a, **k):
    out = orig_fill(self, units, *a, **k)
    v = V["v"]
    if v == "shipped":
        return out
    added = {}
    for u, c in units.items():
        m = RUN.match(u)
        if not m or c <= 0: continue
        pre, r, ch = m.group(1), m.group(2), m.group(3)
        if pre == ch:
            pre, r = "", u
        if pre and not v.endswith("p"): continue
        L = len(r)
        if v.startswith("runs3"):
            if L < 3 or pre.isalnum(): continue
            if v == "runs3m" and ch.isalnum(): continue
        if L < 2: continue
        k2, cc = 2 * L, c
        while k2 <= MAXLEN:
            cc = cc / 2 if v.startswith("half") else cc
            w = pre + ch * k2
            if w not in units:
                added[w] = max(added.get(w, 0.0), cc)
            k2 *= 2
    for w, c in added.items():
        out[w] = max(out.get(w, 0.0), c)
    print(f"  {v}: {len(added)} run units added", flush=True)
    return out
trained.PublicPrior.fill = fill
def main():
    basef, heldf, outs, vs = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
    held = pickle.load(open(heldf, "rb"))
    b = tokenizer_scores(Tokenizer.from_file(basef), held)
    for out in outs:
        rel, items = load(out)
        for v in vs:
            V["v"] = v
            tok = hf.HFTokenizerExporter(model=os.environ.get("MODEL", "bpe"), style={"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[os.environ.get("MODEL", "bpe")], vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
            s = tokenizer_scores(tok, held)
            print(f"{out} {v}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}%", flush=True)
main()
