"""The files shipped inside the package: the recipes (``dp_vocab/recipes/presets/*.cfg``) and,
beside them in ``presets/corpora/``, the Reddit sample corpus and a public word list.

A shipped recipe names its corpus ``corpora/reddit_college_sample.jsonl.gz``, relative like any
path in a recipe. Relative paths are read from the working directory; one of the form
``corpora/NAME`` that does not exist there but names a bundled file is the bundled file, so the
shipped recipes (and copies of them written by ``dp-vocab init``) run from any directory.
"""

from __future__ import annotations

from pathlib import Path

PRESETS = Path(__file__).resolve().parents[2] / "recipes" / "presets"
BUNDLED_CORPORA = PRESETS / "corpora"
SAMPLE = BUNDLED_CORPORA / "reddit_college_sample.jsonl.gz"


def bundled_file(path) -> Path | None:
    """The bundled file a missing relative ``corpora/NAME`` path names, else None."""
    p = Path(path)
    if p.is_absolute() or p.exists() or len(p.parts) != 2 or p.parts[0] != "corpora":
        return None
    candidate = BUNDLED_CORPORA / p.parts[1]
    return candidate if candidate.is_file() and candidate.name != "README.md" else None
