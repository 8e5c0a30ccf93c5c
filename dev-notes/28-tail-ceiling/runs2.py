import pickle, sys, re
from collections import Counter
from tokenizers import Tokenizer
from tokenizers.decoders import ByteLevel
priv = Tokenizer.from_file(sys.argv[1] + "/hf/tokenizer.json"); base = Tokenizer.from_file(sys.argv[2])
held = pickle.load(open(sys.argv[3], "rb"))
dec = ByteLevel(); run = re.compile(r"(.)\1{5,}")
ex = Counter(); n = Counter(); toks = {}
for t in held[::2]:
    for u, _ in priv.pre_tokenizer.pre_tokenize_str(t):
        s = dec.decode([u])
        if not run.search(s): continue
        a, b = priv.model.tokenize(u), base.model.tokenize(u)
        k = (s[:30] + f"…{len(s)}") if len(s) > 30 else s
        ex[k] += len(a) - len(b); n[k] += 1; toks[k] = ([x.value for x in a][:6], [x.value for x in b][:6])
for k, v in ex.most_common(15):
    print(repr(k), n[k], v, toks[k])
