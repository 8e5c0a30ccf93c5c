"""The house rules that a reader cannot see in one file: imports follow the data flow (layers in
pyproject.toml, checked by import-linter), the package type-checks (mypy), and numba is imported
only when a kernel is first used (dp_vocab/compiled.py)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed: pip install '.[test]'")
    return path


def test_imports_follow_the_layers():
    out = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=REPO, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_package_type_checks():
    out = subprocess.run([sys.executable, "-m", "mypy", "dp_vocab"], cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_a_plan_leaves_numba_unimported(tmp_path):
    """Importing dp-vocab and planning a run (recipe, mechanism, thresholds, public list) import
    no compiled kernel: a run loads them while its first batch is read (dp_vocab/compiled.py).
    A module-level ``from numba import`` on that path, or a kernel module imported directly,
    fails here. (The first plan on a machine hashes the public list for its cache: the second
    is what every later run does.)"""
    code = ("import sys\n"
            "from dp_vocab.cli import tune_process\n"
            "from dp_vocab.recipes import plan_run\n"
            "plan_run('quickstart', sys.argv[1], force=True)\n"
            "print(sorted(m for m in sys.modules if m == 'numba' or m.endswith('_kernels')\n"
            "             or m.endswith('_siphash')))\n")
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], cwd=REPO,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"
