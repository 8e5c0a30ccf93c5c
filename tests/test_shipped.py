"""The recipes and the sample corpus ship inside the package: runnable by name from any
directory, listed and copied out by the CLI, and present in a wheel installed outside the
checkout."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dp_vocab
from dp_vocab.cli import app
from dp_vocab.ingest.corpora import JsonlReader
from dp_vocab.ingest.corpora.bundled import PRESETS, SAMPLE, bundled_file
from dp_vocab.errors import RecipeError
from dp_vocab.recipes import load_recipe
from dp_vocab.recipes.shipped import (find_recipe, recipe_summary, shipped_recipes,
                                      write_recipe)

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("shipped")

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_every_shipped_recipe_is_listed_loads_and_names_the_bundled_sample():
    names = shipped_recipes()
    assert "quickstart" in names
    assert names == sorted(p.stem for p in PRESETS.glob("*.cfg"))
    for name in names:
        cfg = load_recipe(name)
        assert bundled_file(cfg["corpus"]["path"]) == SAMPLE, name
        assert recipe_summary(name), f"{name}: no opening comment to describe it"


def test_a_recipe_argument_is_a_file_first_then_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    quick = PRESETS / "quickstart.cfg"
    assert find_recipe("quickstart") == quick
    assert find_recipe("quickstart.cfg") == quick
    assert find_recipe("recipes/quickstart.cfg") == quick     # the repository's old layout
    assert find_recipe(Path("recipes") / "quickstart.cfg") == quick
    assert find_recipe("other/quickstart.cfg") == Path("other/quickstart.cfg")
    (tmp_path / "quickstart").write_text("[paths]\n", encoding="utf-8")
    assert find_recipe("quickstart") == Path("quickstart")    # a file wins over the name


def test_an_unknown_recipe_name_lists_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RecipeError, match=r"file not found. Did you mean quickstart\? "
                                          r"Give a recipe file.*quickstart.*dp-vocab recipes"):
        load_recipe("quikstart")
    with pytest.raises(RecipeError, match=r"private-bpf\.cfg: file not found. Did you mean "
                                          r"private-bpe\?"):
        load_recipe("private-bpf.cfg")
    with pytest.raises(RecipeError, match=r"file not found. Give a recipe file") as err:
        load_recipe("zzzzzz")
    assert "Did you mean" not in str(err.value)
    res = runner.invoke(app, ["run", "quikstart", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "quickstart" in res.output
    assert not (tmp_path / "o").exists()


def test_bundled_corpus_path_is_used_only_when_the_working_directory_has_none(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    rel = "corpora/reddit_college_sample.jsonl.gz"
    assert JsonlReader(rel).files == [SAMPLE]
    assert bundled_file("corpora/README.md") is None
    assert bundled_file("corpora/missing.jsonl") is None
    assert bundled_file("elsewhere/reddit_college_sample.jsonl.gz") is None
    own = tmp_path / "corpora"
    own.mkdir()
    shutil.copy(SAMPLE, own / "reddit_college_sample.jsonl.gz")
    assert JsonlReader(rel).files == [Path(rel)]    # the user's own file wins
    assert bundled_file(rel) is None


def test_cli_lists_shows_and_copies_recipes(tmp_path):
    res = runner.invoke(app, ["recipes"])
    assert res.exit_code == 0, res.output
    listed = [line.split()[0] for line in res.output.splitlines()[:len(shipped_recipes())]]
    assert listed == shipped_recipes()
    res = runner.invoke(app, ["recipes", "show", "quickstart"])
    assert res.exit_code == 0
    assert res.output == (PRESETS / "quickstart.cfg").read_text(encoding="utf-8")
    res = runner.invoke(app, ["recipes", "show", "nope"])
    assert res.exit_code == 2 and "shipped:" in res.output
    target = tmp_path / "mine.cfg"
    res = runner.invoke(app, ["init", "quickstart", str(target)])
    assert res.exit_code == 0, res.output
    assert target.read_text(encoding="utf-8").endswith(
        (PRESETS / "quickstart.cfg").read_text(encoding="utf-8"))
    res = runner.invoke(app, ["init", "policy-laplace", str(target)])
    assert res.exit_code == 2 and "--force" in res.output
    assert "policy_gaussian_public" in target.read_text(encoding="utf-8")   # unchanged
    res = runner.invoke(app, ["init", "policy-laplace", str(target), "--force"])
    assert res.exit_code == 0 and "policy_laplace" in target.read_text(encoding="utf-8")
    with pytest.raises(RecipeError, match="does not exist"):
        write_recipe("quickstart", tmp_path / "no" / "such.cfg")


def test_version_option():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"dp-vocab {dp_vocab.__version__}"


def test_copied_recipe_runs_from_another_directory(tmp_path, monkeypatch):
    """dp-vocab init then run, in a directory with no corpora/: the bundled sample is read."""
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "quickstart", "mine.cfg"]).exit_code == 0
    res = runner.invoke(app, ["run", "mine.cfg", "-o", "out", "--run.seed", "3",
                              "--budget.epsilon", "8"])
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "out" / "privacy.json").read_text(encoding="utf-8"))
    assert record["corpus"]["path"] == "corpora/reddit_college_sample.jsonl.gz"
    assert len((tmp_path / "out" / "vocab.txt").read_text(encoding="utf-8").split()) > 100


# ---- the wheel, installed outside the checkout -------------------------------------------------

def _site_packages() -> list[str]:
    """This interpreter's site-packages (the dependencies), for the wheel's venv."""
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return [d for d in dirs if os.path.isdir(d)]


def _can_build_offline() -> bool:
    """The installed setuptools builds the wheel if it meets pyproject's build requirement
    (>= 77, which reads an SPDX license and builds wheels itself); else pip fetches it."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    return major >= 77


def _pip_version() -> tuple[int, ...]:
    from importlib.metadata import version
    return tuple(int(x) for x in version("pip").split(".")[:2] if x.isdigit())


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory) -> Path:
    """A wheel built from the checkout (offline when setuptools is at hand), installed with no
    dependencies into a fresh venv that sees this interpreter's packages through a .pth file."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"   # a copy: building in the checkout would leave build/ behind
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "dp_vocab", src / "dp_vocab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    isolation = ["--no-build-isolation"] if _can_build_offline() else []
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            *isolation, "-w", str(root / "dist"), str(src)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next((root / "dist").glob("dp_vocab-*.whl"))
    venv = root / "venv"
    # pip >= 22.3 installs into another environment (--python): no pip in the venv to set up
    outside = _pip_version() >= (22, 3)
    subprocess.run([sys.executable, "-m", "venv", *(["--without-pip"] if outside else []),
                    str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                          "['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    pip = [sys.executable, "-m", "pip", "--python", str(py)] if outside else \
        [str(py), "-m", "pip"]
    # installed before the test's packages are visible: where dp_vocab is installed (not
    # editable, as in CI), pip would call the wheel already satisfied and install nothing
    inst = subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True)
    assert inst.returncode == 0, inst.stderr[-3000:]
    # after the venv's own site-packages on sys.path: the wheel's dp_vocab comes first
    Path(site, "test_dependencies.pth").write_text("\n".join(_site_packages()) + "\n")
    return venv


def _in_venv(venv: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_wheel_runs_the_quickstart_by_name_in_any_directory(wheel_venv, tmp_path):
    bin_ = wheel_venv / "bin"
    where = _in_venv(wheel_venv, [str(bin_ / "python"), "-c",
                                  "import dp_vocab; print(dp_vocab.__file__)"], tmp_path)
    assert where.stdout.strip().startswith(str(wheel_venv)), where.stdout + where.stderr
    res = _in_venv(wheel_venv, [str(bin_ / "dp-vocab"), "run", "quickstart", "--output",
                                "out/q", "--quiet"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "out" / "q" / "vocab.txt").stat().st_size > 1000
    listed = _in_venv(wheel_venv, [str(bin_ / "dp-vocab"), "recipes"], tmp_path)
    assert listed.returncode == 0 and listed.stdout.split()[0] == shipped_recipes()[0]
    assert all(name in listed.stdout for name in shipped_recipes())
    version = _in_venv(wheel_venv, [str(bin_ / "dp-vocab"), "--version"], tmp_path)
    assert version.stdout.strip() == f"dp-vocab {dp_vocab.__version__}"
    code = ("import dp_vocab\n"
            "r = dp_vocab.run_recipe('weighted-gaussian', 'out/py', "
            "overrides={'run.seed': 1})\n"
            "print(len(r.release.items))\n")
    py = _in_venv(wheel_venv, [str(bin_ / "python"), "-c", code], tmp_path)
    assert py.returncode == 0, py.stderr[-3000:]
    assert int(py.stdout.strip()) > 0
    assert not (tmp_path / "corpora").exists()


def test_wheel_carries_the_license(wheel_venv):
    licences = [p for p in wheel_venv.glob("lib/*/site-packages/dp_vocab-*.dist-info/**/LICENSE*")]
    assert licences, "no LICENSE in the wheel's metadata"
    assert "Apache License" in licences[0].read_text(encoding="utf-8")
    assert "Version 2.0" in (REPO / "LICENSE").read_text(encoding="utf-8")


def test_private_bpe_keeps_a_line_long_unit_of_wide_characters_as_an_item():
    """``max_length`` counts byte-level characters (an emoji is four): private-bpe keeps a rule
    of 79 "═" (237) and a long Cyrillic word as items, which BpeTrainer can make tokens of."""
    from dp_vocab.ingest.text.tokenizers import byte_level
    from dp_vocab.recipes import resolve_sections
    extract = resolve_sections(load_recipe("private-bpe"), ("items",))["items"]
    rule, word = "═" * 79, "человеконенавистничество"   # 24 letters, 48 byte-level characters
    items = extract(f"# {rule}\nx = '{word}' + 'превысокомногорассмотрительствующий'")
    assert byte_level(" " + rule) in items and byte_level(word) in items
    assert byte_level("превысокомногорассмотрительствующий") in items   # 70
    assert byte_level(" " + "🚨" * 79) in extract("# " + "🚨" * 79)   # 317
    assert byte_level(" " + "🚨" * 80) not in extract("# " + "🚨" * 80)   # 321: dropped
