import sys, pickle, math
from collections import Counter
sys.path.insert(0, "REPO")
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models, pre_tokenizers
counts, vocab_size, special, alphabet, unk = pickle.load(open("ug_train_args.pkl", "rb"))
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
def seg(bpe):
    s = Tokenizer(models.BPE(bpe["vocab"], trained.bpe_merges(bpe))); s.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    used = Counter(); units = list(counts)
    for i in range(0, len(units), 10000):
        ch = units[i:i+10000]
        for u, e in zip(ch, s.encode_batch(ch)):
            for p in e.tokens: used[p] += counts[u]
    return used
extra = int(sys.argv[1])
bpe = trained._bpe(counts, vocab_size + extra, special, alphabet)
used = seg(bpe)
pieces = [p for p in bpe["vocab"] if p not in special]
keep = [p for p in pieces if used[p] > 0 or len(p) == 1]
keep = sorted(keep, key=lambda p: bpe["vocab"][p])[:vocab_size - len(special)]
total = sum(used.values())
fl = math.log(0.5 / total)
sc = [(p, math.log(used[p] / total) if used[p] else fl) for p in keep]
vocab = [(s_, 0.0) for s_ in special] + [tuple(x) for x in trained.with_byte_pieces(sc)]
tok = Tokenizer.from_str(d["tok"]); tok.model = models.Unigram(vocab, unk_id=0, byte_fallback=True)
s = tokenizer_scores(tok, d["held"])
print(extra, len(vocab), round(s["tokens_per_word"], 4), round(s["tokens_per_word"] / 0.9659, 4))
