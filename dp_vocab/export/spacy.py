"""spaCy export: the released strings and a ``lexeme_prob`` lookups table from DP counts.

spaCy 3 reads ``Lexeme.prob`` from the vocab's ``lexeme_prob`` table (keyed by the exact
string). Written under ``spacy/``:

- ``pipeline/``: a blank pipeline whose vocab carries the table: ``spacy.load("out/spacy/pipeline")``
  from anywhere (everything it needs is inside; ``pipeline = false`` skips it);
- ``vocab/`` (``Vocab.from_disk``) and ``lookups/`` (``Lookups.from_disk``);
- ``config.cfg``: a config whose ``[initialize.lookups]`` loads ``spacy/lookups`` through the
  registered ``@misc = "dp_vocab.spacy_lookups.v1"``. Its path is relative, spaCy style: run
  ``python -m spacy assemble spacy/config.cfg MODEL`` from the output directory, or pass
  ``--paths.dp_vocab_lookups DIR``. The output directory can be moved.

Casing: when the items were lower-cased, the table also holds the Capitalised and UPPER form of
each released item with the probability of its lower-cased form (``vocab["The"].prob ==
vocab["the"].prob``): the counts were taken on lower-cased text. Probabilities are
log((c + 1) / Σ(c + 1)) over the DP counts c (add-one smoothing; uniform without counts).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import OutputError, ParameterError
from ..data.release import Release
from .exported import Exported
from .lines import check_items_writable

CONFIG = """\
# A spaCy pipeline whose vocab holds the DP lexeme probabilities. From the dp-vocab output dir:
#   python -m spacy assemble spacy/config.cfg MODEL_DIR
# or from anywhere: ... --paths.dp_vocab_lookups OUTPUT/spacy/lookups
# (spacy/pipeline/ is the same pipeline, ready for spacy.load)
[paths]
dp_vocab_lookups = "spacy/lookups"

[nlp]
lang = "{lang}"
pipeline = []

[components]

[initialize]
vocab_data = null

[initialize.lookups]
@misc = "dp_vocab.spacy_lookups.v1"
path = ${{paths.dp_vocab_lookups}}
"""


class SpacyExporter:
    """Writes ``spacy/pipeline`` (optional), ``spacy/vocab``, ``spacy/lookups`` and
    ``spacy/config.cfg``. Without DP counts every released item gets the same prob."""

    name = "dp_vocab.spacy.v1"
    needs_counts = False

    def __init__(self, lang: str = "en", pipeline: bool = True):
        from spacy.util import get_lang_class
        if not isinstance(lang, str) or not lang:
            raise ParameterError("export.lang", lang, "a spaCy language code such as 'en'")
        try:
            get_lang_class(lang)
        except ImportError:
            raise ParameterError("export.lang", lang,
                                 "a spaCy language code such as 'en', 'de', 'xx'") from None
        if not isinstance(pipeline, bool):
            raise ParameterError("export.pipeline", pipeline, "true or false")
        self.lang, self.pipeline = lang, pipeline

    def probabilities(self, release: Release, lowercased: bool = True) -> dict[str, float]:
        counts = release.counts
        if counts is not None:
            total = sum(max(counts.get(w, 0), 0) + 1 for w in release.items)
            probs = {w: math.log((max(counts.get(w, 0), 0) + 1) / total) for w in release.items}
        else:
            probs = {w: -math.log(max(len(release.items), 1)) for w in release.items}
        if lowercased:  # the forms users look up; a released form keeps its own value
            for w, p in list(probs.items()):
                for cased in (w[:1].upper() + w[1:], w.upper()):
                    probs.setdefault(cased, p)
        return probs

    def lookups(self, release: Release, lowercased: bool = True):
        from spacy.lookups import Lookups
        lk = Lookups()
        lk.add_table("lexeme_prob", self.probabilities(release, lowercased))
        return lk

    def export(self, release: Release, outdir: Path, context: dict | None = None) -> Exported:
        import spacy
        check_items_writable(release.items)
        lowercased = bool((context or {}).get("items", {}).get("lowercase", True))
        out = Path(outdir) / "spacy"
        out.mkdir(exist_ok=True)
        lookups = self.lookups(release, lowercased)
        lookups.to_disk(out / "lookups")
        nlp = spacy.blank(self.lang)
        for w in release.items:
            nlp.vocab.strings.add(w)
        nlp.vocab.lookups.add_table("lexeme_prob", lookups.get_table("lexeme_prob"))
        nlp.vocab.to_disk(out / "vocab")
        (out / "config.cfg").write_text(CONFIG.format(lang=self.lang), encoding="utf-8")
        written = ["spacy/vocab", "spacy/lookups", "spacy/config.cfg"]
        if self.pipeline:
            nlp.meta.update(pipeline_meta((context or {}).get("record"), spacy.__version__))
            nlp.to_disk(out / "pipeline")
            written.append("spacy/pipeline")
        return Exported(written)


def pipeline_meta(record: dict | None, spacy_version: str) -> dict:
    """``meta.json`` fields of the exported pipeline, from the run's privacy record only (the
    guarantee and its stages: the same release gives the same meta). The licence is left to the
    data's owner: the vocabulary is derived from their text."""
    from ..version import __version__
    major, minor = (int(x) for x in spacy_version.split(".")[:2])
    meta: dict[str, object] = {"name": "dp_vocab", "version": "1.0.0", "author": "dp-vocab " + __version__,
            "spacy_version": f">={major}.{minor}.0,<{major + 1}.0.0",
            "description": "Blank pipeline with a differentially private vocabulary and "
                           "lexeme_prob table (dp-vocab)"}
    guarantee = (record or {}).get("guarantee")
    if guarantee:
        stages = [{k: stage[k] for k in ("name", "mechanism", "epsilon", "delta") if k in stage}
                  for stage in record.get("ledger") or []]   # type: ignore[union-attr]
        meta["privacy"] = {**guarantee, "stages": stages,
                           "released_items": record.get("released_items")}  # type: ignore[union-attr]
        meta["description"] = str(meta["description"]) + (f", user-level (ε = {guarantee['epsilon']:g}, "
                                f"δ = {guarantee['delta']:g})-differential privacy: "
                                f"{guarantee.get('neighbouring', 'add or remove one user')}")
    return meta


def spacy_lookups(path: str):
    """For ``[initialize.lookups]``: load the Lookups written by the spaCy exporter."""
    from spacy.lookups import Lookups
    p = Path(path)
    if not (p / "lookups.bin").is_file():
        raise OutputError(f"{p}: no dp-vocab lookups here (lookups.bin missing). A relative path "
                          f"is read from the current directory: run spacy assemble from the "
                          f"dp-vocab output directory, or pass --paths.dp_vocab_lookups "
                          f"OUTPUT/spacy/lookups")
    return Lookups().from_disk(p)
