import sys, pickle, unicodedata
from collections import Counter
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1]); base = Tokenizer.from_file(sys.argv[2])
held = pickle.load(open("pypi.pkl", "rb"))
vocab = tok.get_vocab(); bv = base.get_vocab()
cats = Counter(); chars = Counter(); n = 0; nb = 0
for text in held[:200000] if isinstance(held, list) else list(held)[:200000]:
    t = text if isinstance(text, str) else text[0]
    norm = tok.normalizer.normalize_str(t)
    for w, _ in tok.pre_tokenizer.pre_tokenize_str(norm):
        miss = [c for c in w if c not in vocab]
        if miss:
            n += 1
            c = miss[0]
            nm = unicodedata.name(c, "?").split(" ")[0]
            cats[(unicodedata.category(c), nm)] += 1; chars[c] += 1
            if all(ch in bv for ch in w): nb += 1
print("unk words", n, "of which base has all chars", nb)
for k, v in cats.most_common(25): print(k, v)
print(chars.most_common(40))
