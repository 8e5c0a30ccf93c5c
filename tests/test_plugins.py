"""A mechanism another installed package registers (a ``dp_vocab_mechanisms`` entry point, or
``registry.mechanisms.register``) is listed, made, run in a recipe and recorded under its
registered name, as dp-vocab's own are; short names stand for the newest registered version."""

import json
import textwrap
from dataclasses import dataclass
from importlib.metadata import EntryPoint, EntryPoints

import catalogue
import pytest
from typer.testing import CliRunner

from dp_vocab.cli import app
from dp_vocab.errors import ParameterError
from dp_vocab.ingest.corpora.bundled import SAMPLE
from dp_vocab.mechanisms import WeightedGaussian
from dp_vocab.recipes import plan_run, run_recipe
from dp_vocab.registry import (make_mechanism, mechanism_catalogue, mechanism_names, registry,
                               resolve_mechanism_name)

PLUGIN = "acme_vocab.wide_gaussian.v2"
PLUGIN_MODULE = '''
from dataclasses import dataclass

from dp_vocab.mechanisms import WeightedGaussian


@dataclass(frozen=True, kw_only=True, repr=False)
class WideGaussian(WeightedGaussian):
    """Another package's mechanism: weighted Gaussian's claim and proof, under its own name."""

    namespace = "acme_vocab"
    name = "wide_gaussian"
    version = 2
    summary = "acme's weighted Gaussian"
'''


def _entry_points(*points: tuple[str, str]) -> EntryPoints:
    return EntryPoints(EntryPoint(name, value, "dp_vocab_mechanisms") for name, value in points)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A package ``acme_vocab`` on the path, declaring its mechanism as an entry point; the
    registry as it was before the test afterwards."""
    package = tmp_path / "site" / "acme_vocab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(PLUGIN_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(catalogue, "AVAILABLE_ENTRY_POINTS",
                        _entry_points((PLUGIN, "acme_vocab:WideGaussian")))
    monkeypatch.setattr(catalogue, "REGISTRY", dict(catalogue.REGISTRY))


def test_an_installed_plugin_is_listed_made_run_and_recorded(installed, tmp_path):
    listed = CliRunner().invoke(app, ["mechanisms"])
    assert listed.exit_code == 0, listed.output
    assert f"wide_gaussian  {PLUGIN}: acme's weighted Gaussian" in listed.output
    assert "wide_gaussian" in mechanism_names()
    assert any(full == PLUGIN and "max_items_per_user=100" in params
               for _, full, _, params in mechanism_catalogue())

    made = make_mechanism("wide_gaussian", epsilon=1.0, delta=1e-5)
    assert made.registry_name == PLUGIN == resolve_mechanism_name(PLUGIN)
    assert made.stage().mechanism == PLUGIN

    runs = {}
    for name in ("dp_vocab.weighted_gaussian.v1", PLUGIN):
        out = tmp_path / name
        runs[name] = run_recipe("weighted-gaussian", out, overrides={
            "mechanism.@mechanisms": name, "paths.corpus": str(SAMPLE), "run.seed": 7,
            "run.key": "ab" * 32})
        record = json.loads((out / "privacy.json").read_text(encoding="utf-8"))
        assert record["mechanism"] == name
        assert {s["mechanism"] for s in record["ledger"]} == {name}
    # the plugin runs the code it inherits: the same release as the mechanism it extends
    assert runs[PLUGIN].release.items == runs["dp_vocab.weighted_gaussian.v1"].release.items
    assert runs[PLUGIN].release.mechanism == PLUGIN


@dataclass(frozen=True, kw_only=True, repr=False)
class WideGaussianV3(WeightedGaussian):
    namespace = "acme_vocab"
    name = "wide_gaussian"
    version = 3
    summary = "acme's weighted Gaussian, version 3"


def test_a_short_name_is_the_newest_registered_version(installed):
    registry.mechanisms.register("acme_vocab.wide_gaussian.v3", func=WideGaussianV3)
    assert resolve_mechanism_name("wide_gaussian") == "acme_vocab.wide_gaussian.v3"
    assert resolve_mechanism_name(PLUGIN) == PLUGIN   # an older version, named in full
    assert make_mechanism("wide_gaussian", epsilon=1.0, delta=1e-5).registry_name \
        == "acme_vocab.wide_gaussian.v3"
    assert make_mechanism(PLUGIN, epsilon=1.0, delta=1e-5).registry_name == PLUGIN
    names = mechanism_names()
    assert "wide_gaussian" in names and PLUGIN in names   # each one resolves to its own
    listed = CliRunner().invoke(app, ["mechanisms"]).output.splitlines()
    assert f"{PLUGIN}: acme's weighted Gaussian" in listed   # the older version, in full
    assert "wide_gaussian  acme_vocab.wide_gaussian.v3: acme's weighted Gaussian, version 3" \
        in listed


def test_a_short_name_two_packages_register_must_be_given_in_full(installed):
    @dataclass(frozen=True, kw_only=True, repr=False)
    class OtherGW(WeightedGaussian):
        namespace = "other"
        name = "gw"
        summary = "another package's gw"

    registry.mechanisms.register("other.gw.v1", func=OtherGW)
    with pytest.raises(ParameterError, match=r"^mechanism: expected one of the registered "
                                             r"names: dp_vocab\.gw\.v1, other\.gw\.v1, got "
                                             r"'gw'\. .*give the one you mean in full"):
        make_mechanism("gw", epsilon=1.0, delta=1e-5)
    assert make_mechanism("dp_vocab.gw.v1", epsilon=1.0, delta=1e-5).registry_name \
        == "dp_vocab.gw.v1"
    assert make_mechanism("other.gw.v1", epsilon=1.0, delta=1e-5).registry_name == "other.gw.v1"
    assert {"dp_vocab.gw.v1", "other.gw.v1"} <= set(mechanism_names())


def test_a_class_registered_under_another_name_than_it_records_is_refused(installed, tmp_path):
    registry.mechanisms.register("acme_vocab.renamed.v1", func=WideGaussianV3)
    with pytest.raises(ParameterError, match=r"^mechanism: expected a name registered for a "
                                             r"class that records it .*, got 'acme_vocab\.renamed"
                                             r"\.v1'\. The class registered as 'acme_vocab\."
                                             r"renamed\.v1' records 'acme_vocab\.wide_gaussian\."
                                             r"v3': set the class's namespace, name and version"):
        make_mechanism("renamed", epsilon=1.0, delta=1e-5)
    with pytest.raises(ParameterError, match=r"^mechanism: .* records 'acme_vocab\.wide_gaussian"):
        plan_run("weighted-gaussian", tmp_path / "o",   # before any data is read
                 overrides={"mechanism.@mechanisms": "acme_vocab.renamed.v1"})


def test_an_unknown_name_lists_the_registered_ones_and_the_fix(installed):
    with pytest.raises(ParameterError, match=r"^mechanism: expected one of: .*wide_gaussian.*, "
                                             r"got 'wide_gausian'\. Run `dp-vocab mechanisms`"):
        make_mechanism("wide_gausian", epsilon=1.0, delta=1e-5)


def test_a_broken_plugin_is_named_and_leaves_full_names_working(installed, monkeypatch):
    monkeypatch.setattr(catalogue, "AVAILABLE_ENTRY_POINTS",
                        _entry_points(("broken.mech.v1", "no_such_module_here:Mech")))
    res = CliRunner().invoke(app, ["mechanisms"])
    assert res.exit_code != 0
    assert "dp_vocab_mechanisms entry point failed to load (ModuleNotFoundError" in res.output
    assert "Fix or uninstall that package" in res.output
    assert make_mechanism("dp_vocab.gw.v1", epsilon=1.0, delta=1e-5).registry_name \
        == "dp_vocab.gw.v1"
