"""Plain files: ``vocab.txt`` (one released item per line) and ``vocab.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ParameterError
from ..release import Release
from .exported import Exported
from .lines import check_items_writable, write_lines


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
        check_items_writable(release.items)
        write_lines(outdir / "vocab.txt", release.items)
        written = ["vocab.txt"]
        if self.jsonl:
            with open(outdir / "vocab.jsonl", "w", encoding="utf-8", newline="\n") as f:
                for item in release.items:
                    rec: dict[str, object] = {"item": item}
                    if release.counts is not None:
                        rec["noisy_count"] = release.counts[item]
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            written.append("vocab.jsonl")
        return Exported(written)
