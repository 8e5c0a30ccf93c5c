"""Unigram from a BPE vocabulary trained on the same DP table: pieces = BPE tokens, scores by hard EM."""
import sys, time, pickle, json, math
from collections import Counter
sys.path.insert(0, "REPO")
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models, pre_tokenizers
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
counts, size, special, alphabet, unk = d["tab"]
if len(sys.argv) > 2: counts = pickle.load(open(sys.argv[2], "rb")); counts = {u: c for u, c in counts.items() if sys.argv[3:] == [] or c >= int(sys.argv[3])}
held = d["held"]
def score(model, label):
    tok = Tokenizer.from_str(d["tok"]); tok.model = model
    s = tokenizer_scores(tok, held)
    print(f"{label}: size {tok.get_vocab_size()} tpw {s['tokens_per_word']:.4f} ratio {s['tokens_per_word']/0.9659:.4f} unk {s.get('unknown_per_word')}", flush=True)
t = time.process_time()
bpe = trained._trained("bpe", counts, size, special, alphabet, None)
print("bpe cpu", time.process_time() - t, flush=True)
bm = models.BPE(vocab=bpe["vocab"], merges=[tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in bpe["merges"]], unk_token=None)
score(bm, "bpe-metaspace")
units = list(counts); w = [counts[u] for u in units]
def seg_counts(model):
    tk = Tokenizer(model); tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    c = Counter()
    for i in range(0, len(units), 20000):
        encs = tk.encode_batch(units[i:i+20000])
        for e, wt in zip(encs, w[i:i+20000]):
            for t_ in e.tokens:
                c[t_] += wt
    return c
pieces = [p for p in bpe["vocab"] if p not in special]
c = seg_counts(bm)
for it in range(int(sys.argv[1]) if len(sys.argv) > 1 else 4):
    total = sum(c.values())
    floor = math.log(0.5 / total)
    sc = [(p, math.log(c[p] / total) if c[p] > 0 else floor) for p in pieces]
    vocab = [[s_, 0.0] for s_ in special] + trained.with_byte_pieces(sc)
    um = models.Unigram([tuple(v) for v in vocab], unk_id=0, byte_fallback=True)
    score(um, f"ug-em{it}")
    c = seg_counts(um)
