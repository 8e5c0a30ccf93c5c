"""Public priors: gw_kt reads wordfreq ("wordfreq:LANG"), a file or a mapping, defaults to
wordfreq for its language, and evaluate takes them from the recipe."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dp_vocab import make_mechanism
from dp_vocab.cli import app
from dp_vocab.errors import ParameterError
from dp_vocab.research.evaluation import evaluate
from dp_vocab.recipes import run_recipe
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR

REPO = Path(__file__).resolve().parents[1]


def test_gw_kt_defaults_to_wordfreq_for_its_language():
    en = make_mechanism("gw_kt", epsilon=1, delta=1e-5)
    assert en.params()["public_frequencies"] == "wordfreq:en"
    assert en.public_rank["the"] == 0 and en.public_rank["college"] < en.public_rank["syzygy"]
    de = make_mechanism("gw_kt", epsilon=1, delta=1e-5, lang="de")
    assert de.params()["public_frequencies"] == "wordfreq:de" and de.public_rank["der"] < 5
    explicit = make_mechanism("gw_kt", epsilon=1, delta=1e-5, public_frequencies="wordfreq:fr")
    assert explicit.public_rank["de"] < 5


@pytest.mark.parametrize("kwargs,field", [({"lang": "zz"}, "lang"),
                                          ({"public_frequencies": "wordfreq:zz"},
                                           "public_frequencies")])
def test_unknown_wordfreq_language_is_a_parameter_error(kwargs, field):
    with pytest.raises(ParameterError, match=f"^{field}: expected .*en"):
        make_mechanism("gw_kt", epsilon=1, delta=1e-5, **kwargs)


def test_recipe_with_bad_language_fails_before_reading(tmp_path):
    with pytest.raises(ParameterError, match=r"^mechanism\.public_frequencies"):
        run_recipe(RECIPE_DIR / "gw-kt.cfg", tmp_path / "o",
                   overrides={"paths.public_frequencies": "wordfreq:zz",
                              "paths.corpus": str(tmp_path / "never-read.jsonl")})
    assert not (tmp_path / "o").exists()


def test_evaluate_takes_public_frequencies_from_the_recipe(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"user": f"u{i}", "text": "the cat sat"}) + "\n"
                              for i in range(40)), encoding="utf-8")
    public = tmp_path / "public.tsv"
    public.write_text("cat\t9\nthe\t5\n", encoding="utf-8")
    recipe = (RECIPE_DIR / "gw-kt.cfg").read_text(encoding="utf-8")
    recipe = recipe.replace('corpus = "corpora/reddit_college_sample.jsonl.gz"',
                            f'corpus = "{corpus.as_posix()}"')
    recipe = recipe.replace('public_frequencies = "wordfreq:en"',
                            f'public_frequencies = "{public.as_posix()}"')
    (tmp_path / "r.cfg").write_text(recipe, encoding="utf-8")
    ev = evaluate(tmp_path / "r.cfg", ["gw_kt", "gw"], [1.0], repeats=1)
    by_mech = {r["mechanism"]: r for r in ev.runs}
    assert by_mech["gw_kt"]["public_frequencies"] == public.as_posix()
    assert "public_frequencies" not in by_mech["gw"]  # gw takes no public prior
    ev = evaluate(tmp_path / "r.cfg", ["gw_kt"], [1.0], repeats=1,
                  mechanism_params={"gw_kt": {"public_frequencies": "wordfreq:en"}})
    assert ev.runs[0]["public_frequencies"] == "wordfreq:en"  # -p wins over the recipe


def test_audit_gw_kt_needs_no_public_frequencies_flag():
    res = CliRunner().invoke(app, ["audit", "gw_kt", "--runs", "20", "--canary-items", "5"])
    assert res.exit_code == 0, res.output
    assert "canary released in" in res.output
