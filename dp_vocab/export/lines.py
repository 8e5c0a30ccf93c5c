"""Items in one-item-per-line files: what may not appear in an item, checked before writing.

The extractor never produces an item with a line break (every character ``str.splitlines()``
splits on is whitespace to it) or a lone surrogate (replaced by U+FFFD), so a recipe run always
passes this check; it guards releases built by hand from Python.
"""

from __future__ import annotations

import re

from ..errors import DPVocabError

# exactly the characters str.splitlines() breaks on
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK = re.compile(f"[{re.escape(LINE_BREAKS)}]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ItemNotWritableError(DPVocabError):
    """A released item cannot be written one per line in UTF-8."""


def check_items_writable(items) -> None:
    joined = "\t".join(items)   # one scan; a tab is neither a line break nor a surrogate
    if not (LINE_BREAK.search(joined) or LONE_SURROGATE.search(joined)):
        return
    for i, item in enumerate(items, 1):
        if LINE_BREAK.search(item):
            raise ItemNotWritableError(
                f"released item {i}: contains a line break (one of the characters "
                f"str.splitlines() splits on), which would break one-item-per-line files. "
                f"Items from dp-vocab's extractor never do; split such items before releasing")
        if LONE_SURROGATE.search(item):
            raise ItemNotWritableError(
                f"released item {i}: contains a lone surrogate, which UTF-8 cannot encode. "
                f"Items from dp-vocab's extractor never do (it replaces them with U+FFFD)")


def write_lines(path, items) -> None:
    """One item per line, UTF-8, ``\\n`` endings; line i (from 1) is item i."""
    check_items_writable(items)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(item + "\n" for item in items))
