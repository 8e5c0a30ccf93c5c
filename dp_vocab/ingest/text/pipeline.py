"""An existing Hugging Face tokenizer's own text pipeline (normaliser + pre-tokenizer) as the
item tokenizer, so that the items are exactly the units its model is trained on.

Used to retrain a public tokenizer's model privately ("a tokenizer like this one"): the items are
extracted with its pipeline, and the exporter (``export.hf_tokenizer``'s ``like``) trains the same
kind of model on their DP counts and keeps everything else of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import ParameterError


def tokenizer_file(path, field: str = "path") -> Path:
    """``tokenizer.json`` itself, or the one inside a ``transformers`` tokenizer folder."""
    if not isinstance(path, (str, Path)) or not str(path):
        raise ParameterError(field, path, "the path of a tokenizer.json or of a folder holding "
                             "one (a transformers tokenizer folder)")
    p = Path(path)
    if p.is_dir():
        p = p / "tokenizer.json"
    if not p.is_file():
        where = "" if Path(path).is_absolute() else \
            f" (a relative path: read from the current directory, {Path.cwd()})"
        raise ParameterError(field, str(path), f"an existing tokenizer.json or a folder holding "
                             f"one{where}", "Save a transformers tokenizer with "
                             "tokenizer.save_pretrained(folder) first.")
    return p


def load_tokenizer(path, field: str = "path"):
    """The ``tokenizers.Tokenizer`` at ``path``; a file that is not one is a ParameterError
    naming ``field``."""
    from tokenizers import Tokenizer
    p = tokenizer_file(path, field)
    try:
        return Tokenizer.from_file(str(p))
    except Exception as e:  # noqa: BLE001 - tokenizers raises a bare Exception on bad JSON
        raise ParameterError(field, str(path), "a tokenizer.json that tokenizers can load",
                             str(e).splitlines()[0][:200]) from None


class PipelineTokenizer:
    """``text → units``: the tokenizer's normaliser, then its pre-tokenizer."""

    def __init__(self, path):
        self._load(path)

    def _load(self, path) -> None:
        tok = load_tokenizer(path)
        self.path = str(path)
        self._normalizer, self._pre = tok.normalizer, tok.pre_tokenizer

    def __call__(self, text: str) -> list[str]:
        if self._normalizer is not None:
            text = self._normalizer.normalize_str(text)
        if self._pre is None:
            return text.split()
        return [unit for unit, _ in self._pre.pre_tokenize_str(text)]

    def __getstate__(self) -> dict:
        # processes rebuild the pipeline from the file; a Dask worker's working directory is
        # not the client's
        return {"path": os.path.abspath(self.path)}

    def __setstate__(self, state: dict) -> None:
        self._load(state["path"])

    def describe(self) -> dict:
        import hashlib
        digest = hashlib.sha256(tokenizer_file(self.path).read_bytes()).hexdigest()
        return {"tokenizer": "hf_tokenizer_pipeline", "path": self.path, "sha256": digest}


__all__ = ["PipelineTokenizer", "load_tokenizer", "tokenizer_file"]
