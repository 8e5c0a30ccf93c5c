"""Atomic output directories: a run's files appear all together or not at all."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .errors import OutputError


def check_output_dir(path, force: bool) -> Path:
    """Fail early (before reading data) if ``path`` cannot become the output directory."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise OutputError(f"--output {path}: expected a directory path, found a file. "
                              f"Choose another path.")
        if not force:
            raise OutputError(f"--output {path}: the directory exists. Pass --force to replace "
                              f"it, or choose another path.")
    ancestor = path.resolve().parent
    while not ancestor.exists():  # missing parents are created when the output is written
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK):
        raise OutputError(f"--output {path}: {ancestor} is not a writable directory.")
    return path


@contextlib.contextmanager
def atomic_output_dir(path, force: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling directory; on success it replaces ``path`` in one rename.

    On any exception (including KeyboardInterrupt) the temporary directory is removed and
    ``path`` is left as it was.
    """
    path = check_output_dir(path, force)
    parent = path.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=parent))
    try:
        yield tmp
        if path.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=parent))
            os.rename(path, trash / path.name)
            os.rename(tmp, path)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: Path, obj) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=False)
        f.write("\n")
