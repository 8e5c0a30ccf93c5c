import sys, pickle, math, unicodedata
from collections import Counter
sys.path.insert(0, "REPO")
import polars as pl
from dp_vocab.export import trained
from dp_vocab.research.heldout import tokenizer_scores
from tokenizers import Tokenizer, models, pre_tokenizers
d = pickle.load(open("SCRATCH/reddit_ug_tab.pkl", "rb"))
counts, size, special, alphabet, unk = d["tab"]
df = pl.read_ndjson("SCRATCH/train.jsonl")
texts = df["text"].map_elements(lambda s: unicodedata.normalize("NFKC", s), return_dtype=pl.Utf8)
vc = pl.DataFrame({"w": texts}).select(pl.col("w").str.split(" ")).explode("w")
vc = vc.select(pl.col("w").str.replace_all(r"\s+", " ")).select(pl.col("w").str.split(" ")).explode("w").filter(pl.col("w") != "")
vc = vc.group_by("w").len()
exact = {"▁" + a: int(b) for a, b in zip(vc["w"], vc["len"])}
print("units", len(exact), sum(exact.values()), flush=True)
pickle.dump(exact, open("exact.pkl", "wb"))
