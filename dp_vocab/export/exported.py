"""What an exporter returns: the files it wrote and notes for the user.

A note tells the user where the export differs from what the recipe asked for (a tokenizer
smaller than ``vocab_size``...). It is printed on the console and written to ``privacy.json``,
so it may only hold post-processing of the release: released items, their DP counts,
parameters and public inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Exported:
    files: list[str]                                   # relative to the output directory
    notes: list[str] = field(default_factory=list)
