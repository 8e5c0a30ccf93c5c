import sys, pickle, unicodedata
sys.path.insert(0, "REPO")
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import decoders, models, Tokenizer
brel, bwords, bitems = pickle.load(open("cap_bpe_3.0.pkl", "rb"))
urel, uwords, uitems = pickle.load(open("cap_unigram_3.0.pkl", "rb"))
held = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))["held"]
ex = hf.HFTokenizerExporter(model="unigram", style="sentencepiece", vocab_size=32000, public_prior="wordfreq:en")
dp = ex.build(urel, uitems)
dec = decoders.ByteLevel()
fine = {}
for w in brel.items:
    c = max(brel.counts.get(w, 0), 0)
    t = unicodedata.normalize("NFKC", dec.decode([w]))
    if not t.strip() or any(ch.isspace() for ch in t.strip()): continue
    u = "▁" + t[1:] if t.startswith(" ") else t
    if any(ch.isspace() for ch in u): continue
    fine[u] = fine.get(u, 0) + c
mode = sys.argv[1]
uw = ex.training_units(urel, [w for w in urel.items], uitems)
# scale fine counts to unigram table's total
if mode == "fine":
    table = fine
elif mode == "both":
    s = sum(uw.values()) / max(1, sum(fine.values()))
    table = dict(uw)
    for u, c in fine.items():
        table[u] = table.get(u, 0) + c * s
units_of = ex._normalizer_and_pre_tokenizer(uitems)
table = ex.public_prior.fill(table, units_of, ex._new_characters())
units = trained.training_counts(table, ex.max_training_words)
alphabet = ex._alphabet_for_training(units, uitems)
m = trained.train_model("unigram", units, 32000 - 256, ex.special_tokens, alphabet, ex.unk)
pieces = trained.with_byte_pieces(m["vocab"])
tok = Tokenizer.from_str(dp.to_str()); tok.model = models.Unigram([tuple(p) for p in pieces], unk_id=0, byte_fallback=True)
sc = tokenizer_scores(tok, held)
print(mode, len(fine), "tpw", round(sc["tokens_per_word"], 4), "ratio", round(sc["tokens_per_word"] / 0.9659, 4))
