"""The recipes shipped in the package (``dp_vocab/recipes/presets/NAME.cfg``): listed, read and
copied out by name, spaCy ``init config`` style.

A recipe argument is a file path or the NAME of a shipped recipe. A path that exists is a file;
otherwise ``NAME``, ``NAME.cfg`` and ``recipes/NAME.cfg`` (the repository's old layout) name the
shipped recipe. The shipped recipes read ``corpora/reddit_college_sample.jsonl.gz``, which
resolves to the bundled sample in any working directory (``dp_vocab.ingest.corpora.bundled``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..ingest.corpora.bundled import PRESETS
from ..errors import RecipeError
from ..version import __version__


def shipped_recipes() -> list[str]:
    """The names of the shipped recipes, sorted (``["count-laplace", ..., "quickstart", ...]``)."""
    return sorted(p.stem for p in PRESETS.glob("*.cfg"))


def shipped_recipe_path(name: str) -> Path:
    """The packaged file of the shipped recipe ``name`` (``"quickstart"`` or
    ``"quickstart.cfg"``); a RecipeError naming the shipped recipes if there is none."""
    stem = name[:-4] if name.endswith(".cfg") else name
    path = PRESETS / f"{stem}.cfg"
    if stem != Path(stem).name or not path.is_file():
        raise RecipeError(f"recipe {name!r}: no shipped recipe of that name; shipped: "
                          f"{', '.join(shipped_recipes())} (`dp-vocab recipes` describes them)")
    return path


def find_recipe(recipe):
    """The file a recipe argument names: an existing path, else the shipped recipe it names
    (``quickstart``, ``quickstart.cfg`` or ``recipes/quickstart.cfg``), else the path as given
    (reading it then says it is missing). A dict or Config is returned as is."""
    if not isinstance(recipe, (str, os.PathLike)):
        return recipe
    path = Path(recipe)
    if path.exists() or path.is_absolute():
        return path
    parts = path.parts
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "recipes" and path.suffix == ".cfg"):
        stem = path.name[:-4] if path.name.endswith(".cfg") else path.name
        if (PRESETS / f"{stem}.cfg").is_file():
            return PRESETS / f"{stem}.cfg"
    return path


def recipe_text(name: str) -> str:
    """The text of the shipped recipe ``name``."""
    return shipped_recipe_path(name).read_text(encoding="utf-8")


def recipe_summary(name: str) -> str:
    """The recipe's opening comment, up to the line showing how to run it: what it does."""
    lines = []
    for line in recipe_text(name).splitlines():
        if not line.startswith("#") or "dp-vocab run" in line:
            break
        lines.append(line.lstrip("# ").rstrip())
    return " ".join(lines)


def write_recipe(name: str, path, force: bool = False) -> Path:
    """Copy the shipped recipe ``name`` to ``path`` to edit it, then run it with
    ``dp-vocab run PATH``. An existing file is replaced only with ``force``."""
    text = recipe_text(name)
    path = Path(path)
    if path.is_dir():
        raise RecipeError(f"init: {path} is a directory; give a file name, e.g. "
                          f"{path / (name + '.cfg')}")
    if path.exists() and not force:
        raise RecipeError(f"init: {path} exists; pass --force (force=True) to replace it")
    if not path.parent.is_dir():
        raise RecipeError(f"init: folder {path.parent} does not exist; create it first")
    header = (f"# Written by `dp-vocab init {name}` (dp-vocab {__version__}). Run it with\n"
              f"# `dp-vocab run {path.name} --output DIR`; the corpus path below names the\n"
              f"# bundled sample: point it at your data (--paths.corpus FILE or edit [paths]);\n"
              f"# a relative path is read from the directory you run in, not this file's.\n")
    path.write_text(header + text, encoding="utf-8")
    return path
