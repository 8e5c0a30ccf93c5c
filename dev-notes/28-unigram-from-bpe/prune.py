import sys, time, pickle, json, math
from collections import Counter
sys.path.insert(0, "REPO")
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models, pre_tokenizers
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
counts, size, special, alphabet, unk = d["tab"]
held = d["held"]
def score(model, label):
    tok = Tokenizer.from_str(d["tok"]); tok.model = model
    s = tokenizer_scores(tok, held)
    print(f"{label}: size {tok.get_vocab_size()} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/0.9659:.4f}", flush=True)
units = list(counts); w = [counts[u] for u in units]
def seg_counts(model):
    tk = Tokenizer(model); tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    c = Counter()
    for i in range(0, len(units), 20000):
        for e, wt in zip(tk.encode_batch(units[i:i+20000]), w[i:i+20000]):
            for t_ in e.tokens: c[t_] += wt
    return c
def ug(pieces, c):
    total = sum(c.values()); floor = math.log(0.5 / total)
    sc = [(p, math.log(c[p] / total) if c[p] > 0 else floor) for p in pieces]
    vocab = [[s_, 0.0] for s_ in special] + trained.with_byte_pieces(sc)
    return models.Unigram([tuple(v) for v in vocab], unk_id=0, byte_fallback=True)
factor = float(sys.argv[1]); shrink = float(sys.argv[2])
t = time.process_time()
bpe = trained._trained("bpe", counts, int(size * factor), special, alphabet, None)
bm = models.BPE(vocab=bpe["vocab"], merges=[tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in bpe["merges"]])
pieces = [p for p in bpe["vocab"] if p not in special]
c = seg_counts(bm)
m = ug(pieces, c); c = seg_counts(m)
target = size
while len(pieces) > target:
    keep = max(target, int(len(pieces) * shrink))
    chars = [p for p in pieces if len(p) == 1]
    multi = sorted((p for p in pieces if len(p) > 1), key=lambda p: (-c[p], p))
    pieces = chars + multi[:keep - len(chars)]
    m = ug(pieces, c); c = seg_counts(m); m = ug(pieces, c); c = seg_counts(m)
    print(len(pieces), flush=True)
print("cpu", time.process_time() - t)
score(m, f"prune f{factor} s{shrink}")
