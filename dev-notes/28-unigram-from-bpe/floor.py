import sys, pickle, math
from collections import Counter
sys.path.insert(0, "REPO")
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models, pre_tokenizers
counts, vocab_size, special, alphabet, unk = pickle.load(open("ug_train_args.pkl", "rb"))
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
bpe = trained._bpe(counts, vocab_size, special, alphabet)
s = Tokenizer(models.BPE(bpe["vocab"], trained.bpe_merges(bpe))); s.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
used = Counter(); units = list(counts)
for i in range(0, len(units), 10000):
    ch = units[i:i+10000]
    for u, e in zip(ch, s.encode_batch(ch)):
        for p in e.tokens: used[p] += counts[u]
total = sum(used.values())
pieces = [p for p in bpe["vocab"] if p not in special]
for mode in sys.argv[1:]:
    if mode.startswith("f"):
        fl = math.log(float(mode[1:]) / total)
        sc = [(p, math.log(used[p] / total) if used[p] else fl) for p in pieces]
    elif mode == "add1":
        sc = [(p, math.log((used[p] + 1) / (total + len(pieces)))) for p in pieces]
    elif mode == "sqrt":   # flatten: scores^0.8
        sc = [(p, 0.8 * math.log(used[p] / total) if used[p] else 0.8 * math.log(0.5 / total)) for p in pieces]
    vocab = [(s_, 0.0) for s_ in special] + [tuple(x) for x in trained.with_byte_pieces(sc)]
    tok = Tokenizer.from_str(d["tok"]); tok.model = models.Unigram(vocab, unk_id=0, byte_fallback=True)
    r = tokenizer_scores(tok, d["held"])
    print(mode, round(r["tokens_per_word"], 4), round(r["tokens_per_word"] / 0.9659, 4), flush=True)
