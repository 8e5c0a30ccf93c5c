"""Cache per-user unit sets (exact counts) of the training users for the gpt2 (byte_level, cased, no NFKC)
and metaspace (NFKC, cased) pipelines, plus held-out texts. NON-PRIVATE oracle data."""
import sys, time, pickle
from pathlib import Path
import numpy as np
sys.path.insert(0, "REPO/benchmarks")
from bench_tokenizers import load
import dp_vocab
from dp_vocab.ingest.text.items import ItemExtractor
from dp_vocab.ingest.text.tokenizers import HFPreTokenizer

if __name__ == '__main__':
    t = time.time()
    train, held = load(Path("CORPORA/reddit_college.jsonl.gz"), 0.2)
    pickle.dump(held, open("SCRATCH/held.pkl", "wb"))
    print("split", time.time() - t, flush=True)
    for name, kind, nfkc in (("bpe", "byte_level", False), ("ug", "metaspace", True)):
        ext = ItemExtractor(HFPreTokenizer(kind), lowercase=False, nfkc=nfkc, max_length=50)
        its = dp_vocab.itemsets_from_frame(train, extractor=ext)
        pickle.dump({"strings": list(its.vocab.strings), "items": np.asarray(its.items), "counts": np.asarray(its.counts),
                     "indptr": np.asarray(its.indptr), "n_users": its.n_users, "describe": ext.describe()},
                    open(f"SCRATCH/{name}_items.pkl", "wb"))
        print(name, len(its.vocab.strings), its.n_users, len(its.items), time.time() - t, flush=True)
