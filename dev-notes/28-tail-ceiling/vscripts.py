import sys
from collections import Counter
from tokenizers import Tokenizer
from dp_vocab.export import trained
from dp_vocab.export.hf import _byte_level_text
for f in sys.argv[1:]:
    v = Tokenizer.from_file(f).get_vocab(); sc = Counter()
    for t in v:
        for ch in _byte_level_text(t):
            name = trained._script_language(ch)
            if name: sc[name] += 1; break
    print(f, dict(sc))
