"""spaCy export: the released strings and a ``lexeme_prob`` lookups table from DP counts.

spaCy 3 ignores ``prob`` set on lexemes directly; ``Lexeme.prob`` reads the vocab's
``lexeme_prob`` lookups table, which a pipeline gets through ``[initialize.lookups]``:

    [initialize.lookups]
    @misc = "dp_vocab.spacy_lookups.v1"
    path = "out/run/spacy/lookups"
"""

from __future__ import annotations

import math
from pathlib import Path

from ..release import Release

EXAMPLE_CONFIG = """\
# Use the DP vocabulary in a spaCy pipeline:  python -m spacy init fill-config / train ...
[nlp]
lang = "{lang}"
pipeline = []

[components]

[initialize]
vocab_data = null

[initialize.lookups]
@misc = "dp_vocab.spacy_lookups.v1"
path = "{lookups}"
"""


class SpacyExporter:
    """Writes ``spacy/vocab`` (strings + lookups, ``Vocab.from_disk``), ``spacy/lookups`` and an
    example ``spacy/config.cfg``. Without DP counts every released item gets the same prob."""

    name = "dp_vocab.spacy.v1"
    needs_counts = False

    def __init__(self, lang: str = "en"):
        self.lang = lang

    def lookups(self, release: Release):
        from spacy.lookups import Lookups
        if release.counts is not None:
            total = sum(max(release.counts.get(w, 0), 0) + 1 for w in release.items)
            probs = {w: math.log((max(release.counts.get(w, 0), 0) + 1) / total)
                     for w in release.items}
        else:
            probs = {w: -math.log(max(len(release.items), 1)) for w in release.items}
        lk = Lookups()
        lk.add_table("lexeme_prob", probs)
        return lk

    def export(self, release: Release, outdir: Path, context: dict | None = None) -> list[str]:
        import spacy
        out = Path(outdir) / "spacy"
        out.mkdir(exist_ok=True)
        lookups = self.lookups(release)
        lookups.to_disk(out / "lookups")
        nlp = spacy.blank(self.lang)
        for w in release.items:
            nlp.vocab.strings.add(w)
        nlp.vocab.lookups = lookups
        nlp.vocab.to_disk(out / "vocab")
        final = Path((context or {}).get("output", outdir)).resolve() / "spacy" / "lookups"
        (out / "config.cfg").write_text(
            EXAMPLE_CONFIG.format(lang=self.lang, lookups=final.as_posix()), encoding="utf-8")
        return ["spacy/vocab", "spacy/lookups", "spacy/config.cfg"]


def spacy_lookups(path: str):
    """For ``[initialize.lookups]``: load the Lookups written by the spaCy exporter."""
    from spacy.lookups import Lookups
    return Lookups().from_disk(Path(path))
