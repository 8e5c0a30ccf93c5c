import sys, pickle, re, unicodedata
from collections import Counter
sys.path.insert(0, "REPO")
from dp_vocab.export import hf, trained
from tokenizers import Tokenizer, models
rel, words, items = pickle.load(open("cap_unigram_3.0.pkl", "rb"))
held = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))["held"]
ex = hf.HFTokenizerExporter(model="unigram", style="sentencepiece", vocab_size=32000, public_prior="wordfreq:en")
dp = ex.build(rel, items)
exact = pickle.load(open("exact.pkl", "rb"))
# oracle: same pipeline, model from exact counts
special = ex.special_tokens
m = trained.train_model("unigram", exact, 32000 - 256, special, sorted({ch for u in exact for ch in u} )[:2000], "<unk>")
pieces = trained.with_byte_pieces(m["vocab"])
orc = Tokenizer.from_str(dp.to_str()); orc.model = models.Unigram([tuple(p) for p in pieces], unk_id=0, byte_fallback=True)
units = Counter()
for t in held:
    t = unicodedata.normalize("NFKC", t)
    for w in t.split():
        units["▁" + w] += 1
ul = list(units)
def ntok(tok):
    out = {}
    for i in range(0, len(ul), 20000):
        ch = ul[i:i+20000]
        for u, e in zip(ch, tok.encode_batch([u[1:] for u in ch], add_special_tokens=False)):
            out[u] = len(e.tokens)
    return out
a, b = ntok(dp), ntok(orc)
released = set(rel.items)
def cat(u):
    w = u[1:]
    rel_ = "rel" if u in released else "norel"
    if re.fullmatch(r"[a-z]+", w): k = "lower"
    elif re.fullmatch(r"[A-Z][a-z]+", w): k = "Cap"
    elif re.fullmatch(r"[A-Za-z]+", w): k = "mixedalpha"
    elif re.fullmatch(r"[A-Za-z]+[.,!?:;)\"']+", w): k = "word+punct"
    elif re.fullmatch(r"[\"'(]+[A-Za-z]+.*", w): k = "punct+word"
    elif re.search(r"\d", w): k = "digits"
    elif re.search(r"https?:|www\.|\.com", w): k = "url"
    else: k = "other"
    return rel_ + ":" + k
diff, tot, occ = Counter(), Counter(), Counter()
for u, n in units.items():
    c = cat(u); diff[c] += n * (a[u] - b[u]); tot[c] += n * a[u]; occ[c] += n
alltok = sum(n * a[u] for u, n in units.items()); alldiff = sum(diff.values())
print("dp tokens", alltok, "oracle", alltok - alldiff, "gap", alldiff)
for c, d in diff.most_common():
    print(f"{c:22s} occ {occ[c]:9d} dp_tok {tot[c]:9d} excess {d:8d} ({d/alldiff:.1%})")
import random
random.seed(1)
ex_ = [u for u in ul if cat(u) in ("norel:word+punct", "norel:other", "norel:digits") and units[u] >= 3]
random.shuffle(ex_)
for u in ex_[:40]:
    print(units[u], cat(u), dp.encode(u[1:], add_special_tokens=False).tokens, orc.encode(u[1:], add_special_tokens=False).tokens)
