import sys, json, pickle
sys.path.insert(0, "SCRATCH")
from rex import load
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.research.heldout import tokenizer_scores
rel, items = load(sys.argv[1])
tok = HFTokenizerExporter(model="unigram", style="sentencepiece", vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
v = tok.get_vocab()
print(sys.argv[1], "released", len(rel.items), "in vocab", sum(u in v for u in rel.items), flush=True)
held = pickle.load(open("" + __import__("os").environ.get("HELD", "reddit.pkl") + "", "rb"))
s = tokenizer_scores(tok, held); print("tpw", s["tokens_per_word"], s["tokens_per_word"] / float(__import__("os").environ.get("BASEV", "0.9659495684019361")), flush=True)
