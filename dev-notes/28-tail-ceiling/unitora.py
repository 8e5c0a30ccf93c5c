"""ORACLE (NON-PRIVATE): the trainer's table from exact user counts of units held by >= T training users (x the
release's count per user), with the shipped prior. python unitora.py OUT BASE HELD T[,T]"""
import sys, os, pickle
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.data.release import Release
from dp_vocab.export import hf
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf = sys.argv[1:4]
rel, items = load(out)
fusers, uusers = pickle.load(open(f"frag_{os.path.basename(out)}.pkl", "rb"))
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
occ, capped = pickle.load(open("occ_pypi.pkl", "rb")) if os.environ.get("OCC") else (None, None)
src = uusers if not os.environ.get("OCC") else (occ if os.environ["OCC"] == "all" else capped[int(os.environ["OCC"])])
for T in [int(t) for t in sys.argv[4].split(",")]:
    counts = {u: src[u] * 30.88 for u, n in uusers.items() if n >= T and len(u) <= 50}
    r = Release(items=sorted(counts), mechanism=rel.mechanism, params={}, epsilon=3, delta=1e-5, randomness={},
                privacy={}, counts=counts, counts_info=None if os.environ.get('NOFLOOR') else rel.counts_info)
    tok = hf.HFTokenizerExporter(model="bpe", style="gpt2", vocab_size=32000, public_prior=os.environ.get("PRIOR", "wordfreq:en") or None).build(r, items)
    s = tokenizer_scores(tok, held)
    print(f"T={T}: units {len(counts)} ratio {s['tokens_per_word']/b['tokens_per_word']:.4f}", flush=True)
