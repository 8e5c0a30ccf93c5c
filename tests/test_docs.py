"""Every code block of README.md and docs/*.md runs: ``bash`` blocks command by command
(``dp-vocab`` in-process), ``python`` blocks in one namespace per page, ``ini`` recipes planned
(checked without reading data). ``text`` blocks are synopses and diagrams, not code. Each page
runs in a fresh directory holding ``my_corpus.jsonl.gz`` (the docs' stand-in for your corpus).
The README's setup commands run from their ``dp-vocab`` part: the install itself is what the
wheel test and CI do."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import catalogue
import pytest
from typer.testing import CliRunner

import dp_vocab.registry  # noqa: F401 - registers before a page copies catalogue.REGISTRY (else
#   the first page to import it registers into its copy, and later pages find nothing)
from dp_vocab.cli import app
from dp_vocab.ingest.corpora.bundled import SAMPLE

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SETUP = re.compile(r"^python3 -m venv \.venv && \.venv/bin/pip install -q '?\.(\[\w+\])?'? && ")


def blocks(page: Path) -> list[tuple[str, str]]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


def test_every_block_has_a_known_kind():
    for page in PAGES:
        for lang, _ in blocks(page):
            assert lang in ("bash", "python", "ini", "text"), f"{page.name}: ```{lang}"


def test_readme_is_short_and_starts_with_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 200
    first = [code for _, code in blocks(REPO / "README.md")[:2]]
    assert first[0].startswith("python3 -m venv .venv && .venv/bin/pip install -q . && "
                               ".venv/bin/dp-vocab run quickstart")
    assert first[1].strip() == ("python3 -m venv .venv && .venv/bin/pip install -q '.[test]' "
                                "&& .venv/bin/python -m pytest")
    assert (REPO / ".ci" / "run").read_text().rstrip().endswith(first[1].strip())


def _commands(code: str) -> list[str]:
    out = []
    for line in code.splitlines():
        line = line.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _run_bash(code: str, cwd: Path) -> None:
    for line in _commands(code):
        if SETUP.match(line):
            rest = SETUP.sub("", line)
            if rest == ".venv/bin/python -m pytest":
                continue   # the suite itself (this test is in it); .ci/run runs the line whole
            line = rest.replace(".venv/bin/", "", 1)
        args = shlex.split(line)
        assert args[0] == "dp-vocab", f"not a dp-vocab command: {line}"
        res = CliRunner().invoke(app, args[1:])
        assert res.exit_code == 0, f"{line}\n{res.output}"


def _run_ini(code: str, cwd: Path) -> None:
    from dp_vocab.recipes import plan_run
    recipe = cwd / "block.cfg"
    recipe.write_text(code, encoding="utf-8")
    plan_run(recipe, cwd / "planned")   # every section resolved; no data read


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_code_blocks_run(page, tmp_path, monkeypatch):
    found = blocks(page)
    if not any(lang != "text" for lang, _ in found):
        pytest.skip("no code block")
    monkeypatch.chdir(tmp_path)
    # a page may register a mechanism (docs/mechanisms.md): for that page only
    monkeypatch.setattr(catalogue, "REGISTRY", dict(catalogue.REGISTRY))
    shutil.copy(SAMPLE, tmp_path / "my_corpus.jsonl.gz")
    namespace: dict = {"__name__": "__main__"}   # a page's script, as `python page.py` runs it
    for lang, code in found:
        if lang == "bash":
            _run_bash(code, tmp_path)
        elif lang == "python":
            exec(compile(code, f"{page.name} block", "exec"), namespace)
        elif lang == "ini":
            _run_ini(code, tmp_path)


def test_the_site_builds_without_warnings(tmp_path):
    mkdocs = shutil.which("mkdocs", path=os.path.dirname(sys.executable)) or shutil.which("mkdocs")
    if mkdocs is None:   # the test extra installs it: the site is part of what CI checks
        pytest.fail("mkdocs is not installed: pip install '.[test]'")
    res = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for documented in ("run_recipe", "make_mechanism", "ItemSets", "evaluate"):   # from docstrings
        assert f'id="dp_vocab.' in api and documented in api, documented
    # what a reader trips over in a browser: make_mechanism's docstring is written at import
    # (mkdocs_hooks.RuntimeDocstrings), Sphinx roles show as text, a doctest outside an Examples
    # section becomes a nested quote
    assert "Registered mechanisms" in api and "policy_gaussian_public" in api
    assert ":func:" not in api and ":class:" not in api and "<blockquote" not in api
    pages = list((tmp_path / "site").rglob("*.html"))
    assert (tmp_path / "site" / "proofs" / "policy" / "index.html").exists()   # the proofs
    for page in pages:
        text = page.read_text(encoding="utf-8")
        # nothing loaded from the network (highlight.js from a CDN fails offline)
        assert not re.search(r'<(script|link)[^>]+(src|href)="https?:', text), page
        # the theme's scroll-spy throws on a heading id that starts with a digit (our pages;
        # 404.html is the theme's own)
        assert page.name == "404.html" or not re.search(r'<h[1-6] id="\d', text), page
