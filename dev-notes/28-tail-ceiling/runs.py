"""Share of the held-out excess in runs of one repeated character (NON-PRIVATE dev analysis)."""
import pickle, sys, re
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
priv = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json"); base = Tokenizer.from_file(sys.argv[2])
held = pickle.load(open(sys.argv[3], "rb"))
dec = ByteLevel()
run = re.compile(r"(.)\1{5,}")
tot = 0; inrun = 0; toks = 0
for t in held:
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(t):
        a, b = len(priv.model.tokenize(u)), len(base.model.tokenize(u))
        toks += b; tot += a - b
        if run.search(dec.decode([u])): inrun += a - b
print(f"excess tokens {tot} ({tot/toks:.4%} of base tokens); in units with a run of 6+ of one character {inrun} ({inrun/max(tot,1):.1%} of the excess)")
