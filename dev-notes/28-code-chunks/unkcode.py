import sys, pickle, json, unicodedata
from collections import Counter
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1]); held = pickle.load(open(sys.argv[2], "rb"))
vocab = tok.get_vocab()
first = Counter(); blocks = Counter(); words = 0; n = 0
for t in held:
    norm = tok.normalizer.normalize_str(t)
    for w, _ in tok.pre_tokenizer.pre_tokenize_str(norm):
        words += 1
        miss = [c for c in w if c not in vocab]
        if miss:
            n += 1; c = miss[0]; first[c] += 1
            blocks[(unicodedata.category(c), unicodedata.name(c, "?").split(" ")[0])] += 1
# users in training holding each char
tu = Counter()
for line in open(sys.argv[3]):
    s = set(json.loads(line)["text"])
    for c in first:
        if c in s: tu[c] += 1
print("words", words, "unk", n, n / words)
for k, v in blocks.most_common(20): print(k, v)
print([(c, v, tu[c]) for c, v in first.most_common(50)])
