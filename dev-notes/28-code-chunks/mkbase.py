import sys, json, pickle
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
out, train, dest = sys.argv[1:4]
tok = Tokenizer.from_file(out + "/hf/tokenizer.json")
texts = [json.loads(l)["text"] for l in open(train)]
base = nonprivate_tokenizer(tok, texts, 32000)
base.save(dest)
