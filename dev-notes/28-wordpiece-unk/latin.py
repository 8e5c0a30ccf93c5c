"""Re-export a saved release with Latin-script wordfreq lists as script lists (NON-PRIVATE dev
analysis): a released unit with letters outside ASCII of the Latin script counts for every
Latin-script language whose list writes all those letters (a letter a language writes: in at
least 0.1% of its first 50,000 words' frequency mass). python latin.py OUT BASE HELD MODEL"""
import sys, pickle, unicodedata
sys.path.insert(0, "SCRATCH_PREV")
from rex import load
from tokenizers import Tokenizer
from dp_vocab.export import hf, trained
from dp_vocab.research.heldout import tokenizer_scores
out, basef, heldf, model = sys.argv[1:5]
LATIN = ["ca", "cs", "da", "de", "es", "fi", "fil", "fr", "hu", "id", "is", "it", "lt", "lv", "ms",
         "nb", "nl", "pl", "pt", "ro", "sh", "sk", "sl", "sv", "tr", "vi"]
def latin_extra(ch):
    return ord(ch) > 0x7F and ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")
alpha = {}
for lang in LATIN:
    mass = {}
    for w, f in trained._first_words(lang, 50000):
        for ch in set(w):
            if latin_extra(ch):
                mass[ch] = mass.get(ch, 0.0) + f
    tot = sum(f for _, f in trained._first_words(lang, 50000))
    alpha[lang] = {ch for ch, m in mass.items() if m >= 1e-3 * tot}
orig = trained.script_languages
def patched(texts):
    langs = set()
    for text in texts:
        langs |= orig([text])
        extra = {ch for ch in text if latin_extra(ch)}
        if extra:
            langs |= {l for l in LATIN if extra <= alpha[l]}
    return langs
held = pickle.load(open(heldf, "rb"))
b = tokenizer_scores(Tokenizer.from_file(basef), held)
rel, items = load(out)
style = {"bpe": "gpt2", "wordpiece": "bert", "unigram": "sentencepiece"}[model]
for name, fn in (("shipped", orig), ("latin lists", patched)):
    trained.script_languages = fn
    tok = hf.HFTokenizerExporter(model=model, style=style, vocab_size=32000, public_prior="wordfreq:en").build(rel, items)
    s = tokenizer_scores(tok, held)
    print(f"{out} {model} {name}: ratio {s['tokens_per_word']/b['tokens_per_word']:.4f} unk {100*s['unknown_rate']:.3f}% (base {100*b['unknown_rate']:.3f}%)", flush=True)
