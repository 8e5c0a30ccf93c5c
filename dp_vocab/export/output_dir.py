"""Atomic output directories: a run's files appear all together or not at all.

Every output directory holds a marker file (``.dp-vocab-output``) listing the files written.
``--force`` replaces only such a directory, unchanged since (no file added), or an empty one:
never a directory holding anything else, the current directory, one of its ancestors, or a
directory holding the run's own inputs. Replacement happens under a lock on the parent
directory, so concurrent writers of one output each finish cleanly (the last one wins) and leave
no temporary directories behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..version import __version__
from ..errors import OutputError

MARKER = ".dp-vocab-output"


def _where(path) -> str:
    return f"--output {path}"


def check_output_dir(path, force: bool, protect: Iterable = (),
                     read_below: Iterable = ()) -> Path:
    """Fail early (before reading data) if ``path`` cannot become the output directory.

    ``protect``: input paths (recipe, corpus) that the output must not contain;
    ``read_below``: folders whose sub-folders the reader searches (a text folder, a recursive
    glob's base), which the output must not be inside: the next run would read it as data.
    """
    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the name came from non-UTF-8 bytes
        raise OutputError(f"{_where(path)}: the path is not valid UTF-8; choose a UTF-8 "
                          f"name.") from None
    try:
        real = path.resolve()
        cwd = Path.cwd().resolve()
        if real == cwd or real in cwd.parents:
            raise OutputError(f"{_where(path)}: this is the current directory or one of its "
                              f"parents; it cannot be replaced. Choose a new sub-directory, "
                              f"e.g. out/run1.")
        for p in protect:
            rp = Path(p).resolve()
            if rp == real or real in rp.parents:
                raise OutputError(f"{_where(path)}: it contains an input of this run ({p}); "
                                  f"choose an output path outside the inputs.")
        for p in read_below:
            if Path(p).resolve() in real.parents:
                raise OutputError(f"{_where(path)}: it is inside {p}, whose sub-folders the "
                                  f"corpus reader searches: the next run would read the output "
                                  f"as data. Choose an output path outside it.")
        parent = Path(os.path.abspath(path)).parent
        # under the lock concurrent writers use: never see an output half-way through a swap
        with _parent_lock(parent) if parent.is_dir() else contextlib.nullcontext():
            if path.exists() or path.is_symlink():
                if not path.is_dir():
                    raise OutputError(f"{_where(path)}: expected a directory path, found a "
                                      f"file. Choose another path.")
                if not force:
                    raise OutputError(f"{_where(path)}: the directory exists. Pass --force "
                                      f"(force=True from Python) to replace it, or choose "
                                      f"another path.")
                check_replaceable(path)
        ancestor = Path(os.path.abspath(path)).parent
        while not ancestor.exists():  # missing parents are created when the output is written
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise OutputError(f"{_where(path)}: {ancestor} is a file, not a directory.")
        probe = tempfile.mkdtemp(prefix=".dp-vocab-probe-", dir=ancestor)
        os.rmdir(probe)
    except OSError as e:
        raise OutputError(f"{_where(path)}: cannot write there "
                          f"({e.strerror or type(e).__name__}). Choose another path.") from None
    except ValueError as e:  # an embedded NUL byte and the like
        raise OutputError(f"{_where(path)}: not a usable path ({e}).") from None
    return path


def check_replaceable(path: Path) -> None:
    """``path`` is empty, or a dp-vocab output holding only the files its marker lists."""
    found = _tree(path)
    if not found:
        return
    marker = path / MARKER
    try:
        written = set(json.loads(marker.read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise OutputError(f"{_where(path)}: the directory exists and is not a dp-vocab output "
                          f"(no valid {MARKER} marker); --force replaces only a previous "
                          f"dp-vocab output or an empty directory. Choose another path or "
                          f"remove it yourself.") from None
    allowed = written | {MARKER} | {p for f in written for p in map(str, Path(f).parents)}
    extra = sorted(found - allowed)
    if extra:
        raise OutputError(f"{_where(path)}: the previous dp-vocab output now also holds "
                          f"{extra[0]!r}, which dp-vocab did not write; --force will not delete "
                          f"it. Move it away or choose another path.")


def _tree(path: Path) -> set[str]:
    """Relative paths of every file and directory below ``path``."""
    out: set[str] = set()
    for root, dirs, files in os.walk(path):
        rel = Path(root).relative_to(path)
        out.update(str(rel / name) for name in dirs + files)
    return out


@contextlib.contextmanager
def _parent_lock(parent: Path) -> Iterator[None]:
    """An exclusive advisory lock on the parent directory itself (no lock file is left)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def atomic_output_dir(path, force: bool = False, protect: Iterable = ()) -> Iterator[Path]:
    """Yield a temporary sibling directory; on success it replaces ``path`` in one rename.

    On any exception (including KeyboardInterrupt) the temporary directory is removed and
    ``path`` is left as it was. OS errors while writing become :class:`OutputError`.
    """
    path = check_output_dir(path, force, protect)
    target = Path(os.path.abspath(path))
    parent = target.parent
    tmp = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 would hide the release from others
        yield tmp
        write_json(tmp / MARKER, {"library": "dp-vocab", "version": __version__,
                                  "files": sorted(_tree(tmp))})
        trash = tmp.with_name(tmp.name.replace(".tmp-", ".old-", 1))
        with _parent_lock(parent):
            replaced = _install(tmp, target, trash, path, force)
        tmp = None
        if replaced:
            shutil.rmtree(trash, ignore_errors=True)
    except OSError as e:
        raise OutputError(f"{_where(path)}: cannot write ({e.strerror or type(e).__name__}); "
                          f"nothing was written.") from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _install(tmp: Path, target: Path, trash: Path, shown, force: bool) -> bool:
    """Rename ``tmp`` to ``target`` (under the parent lock); True if an old output was moved
    to ``trash``. The conditions are checked again: another run may have written meanwhile."""
    if not (target.exists() or target.is_symlink()):
        os.rename(tmp, target)
        return False
    if not force:
        raise OutputError(f"{_where(shown)}: the directory was created by someone else while "
                          f"this run was working. Pass --force (force=True from Python) to "
                          f"replace it, or choose another path.")
    check_replaceable(target)
    os.rename(target, trash)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(trash, target)  # put the previous output back
        raise
    return True


def write_json(path: Path, obj) -> None:
    """Strict JSON: a number that is not finite is an error here (JSON has no NaN); a writer
    whose values may be "not measured" makes them None first."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False)
        f.write("\n")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
