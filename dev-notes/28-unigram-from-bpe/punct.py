import sys, pickle, re
sys.path.insert(0, "REPO")
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models
counts, vocab_size, special, alphabet, unk = pickle.load(open("ug_train_args.pkl", "rb"))
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
rate = float(sys.argv[1]); marks = sys.argv[2].split("|")
table = dict(counts)
for u, c in counts.items():
    if re.fullmatch(r"▁[A-Za-z]+", u):
        for mk in marks:
            v = u + mk
            if v not in table:
                table[v] = max(1, round(c * rate))
m = trained.train_model("unigram", table, vocab_size, special, alphabet, unk)
pieces = trained.with_byte_pieces(m["vocab"])
tok = Tokenizer.from_str(d["tok"]); tok.model = models.Unigram([tuple(p) for p in pieces], unk_id=0, byte_fallback=True)
s = tokenizer_scores(tok, d["held"])
print(rate, marks, round(s["tokens_per_word"], 4), round(s["tokens_per_word"] / 0.9659, 4), flush=True)
