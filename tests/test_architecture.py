"""The house rules that a reader cannot see in one file: imports follow the data flow (layers in
pyproject.toml, checked by import-linter) and the package type-checks (mypy)."""

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
