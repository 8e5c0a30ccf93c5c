"""Plain files: ``vocab.txt`` (one released item per line) and ``vocab.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ParameterError
from ..data.release import Release
from .exported import Exported
from .lines import write_lines


class PlainExporter:
    """``vocab.txt`` always; ``vocab.jsonl`` (item, and noisy count when one was paid for)."""

    name = "dp_vocab.plain.v1"

    def __init__(self, jsonl: bool = True):
        if not isinstance(jsonl, bool):
            raise ParameterError("export.jsonl", jsonl, "true or false")
        self.jsonl = jsonl

    needs_counts = False

    def export(self, release: Release, outdir: Path, context: dict | None = None) -> Exported:
        outdir = Path(outdir)
        write_lines(outdir / "vocab.txt", release.items)   # checks the items first
        written = ["vocab.txt"]
        if self.jsonl:
            # the lines json.dumps({"item": …[, "noisy_count": …]}, ensure_ascii=False) writes,
            # with one encoder for all (json.dumps per item rebuilds an encoder each call)
            enc = json.JSONEncoder(ensure_ascii=False).encode
            counts = release.counts
            lines = ([f'{{"item": {enc(x)}}}\n' for x in release.items] if counts is None else
                     [f'{{"item": {enc(x)}, "noisy_count": {enc(counts[x])}}}\n'
                      for x in release.items])
            with open(outdir / "vocab.jsonl", "w", encoding="utf-8", newline="\n") as f:
                f.write("".join(lines))
            written.append("vocab.jsonl")
        return Exported(written)
