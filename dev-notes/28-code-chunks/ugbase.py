"""Non-private Unigram on the code chunks with Metaspace units over MAXC characters dropped from
the training text (tokenizers' trainer panics on the raw text); scores both on the held-out chunks."""
import sys, json, pickle, re
sys.path.insert(0, "REPO")
from tokenizers import Tokenizer
from dp_vocab.research.heldout import nonprivate_tokenizer, tokenizer_scores
out, train, heldf, maxc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tok = Tokenizer.from_file(out + "/hf/tokenizer.json")
long = re.compile(r"\S{%d,}" % (maxc + 1))
texts = [long.sub("", json.loads(l)["text"]) for l in open(train)]
base = nonprivate_tokenizer(tok, texts, 32000)
base.save(f"base_cc_ug_{maxc}.json")
held = pickle.load(open(heldf, "rb"))
p, b = tokenizer_scores(tok, held), tokenizer_scores(base, held)
print(out, maxc, p, b, p["tokens_per_word"] / b["tokens_per_word"], flush=True)
