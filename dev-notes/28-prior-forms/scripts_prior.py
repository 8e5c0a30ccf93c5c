"""patch (byte-level only): public word lists of the scripts the release holds, at their share of released letter mass."""
import os, unicodedata
from dp_vocab.export import trained
from tokenizers import decoders
_fill = trained.PublicPrior.fill
LANG = {"CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "CYRILLIC": "ru",
        "ARABIC": "ar", "HEBREW": "he", "GREEK": "el", "DEVANAGARI": "hi"}
UNSPACED = {"zh", "ja"}
N = int(os.environ.get("SCRIPT_WORDS", "50000"))
X = float(os.environ.get("SCRIPT_X", "1"))
dec = decoders.ByteLevel()
def fill(self, units, units_of, new_characters):
    out = _fill(self, units, units_of, new_characters)
    if units_of(" a") != ["Ġa"] or not os.environ.get("SCRIPTS"):
        return out
    import wordfreq
    mass = {}; letters = 0.0
    for u, c in units.items():
        if c <= 0: continue
        s = dec.decode([u])
        if any(ch.isalpha() for ch in s): letters += c
        for sc in {unicodedata.name(ch, "?").split()[0] for ch in s if ord(ch) >= 128 and ch.isalpha()}:
            if sc in LANG: mass[LANG[sc]] = mass.get(LANG[sc], 0.0) + c
    total = sum(c for c in units.values() if c > 0); smallest = min(c for c in units.values() if c > 0)
    print("script shares", {k: v / letters for k, v in mass.items()}, flush=True)
    n = 0
    for lang, m in mass.items():
        s = X * m / letters
        freq = sorted(wordfreq.get_frequency_dict(lang).items(), key=lambda kv: (-kv[1], kv[0]))[:N]
        for w, f in freq:
            made = units_of(w if lang in UNSPACED else " " + w)
            if len(made) == 1 and made[0] not in out:
                out[made[0]] = min(smallest, max(1.0, f * total * s)); n += 1
    print("script words", n, flush=True)
    return out
trained.PublicPrior.fill = fill
