"""Every parameter of every registered mechanism, [counts] stage, reader, extractor, tokenizer and
exporter, given a hostile value, is refused with a ParameterError when the object is built (before
any data is read), or gives an object whose derived scales, thresholds and privacy record are
finite and which works on a tiny input. Parameters are found by introspecting the registry, so a
new registration or parameter is covered without editing this file."""

import inspect
import json
import math
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dp_vocab.errors import CorpusError, ParameterError
from dp_vocab.privacy.accounting import Ledger
from dp_vocab.registry import (mechanism_names, mechanism_parameters, make_mechanism,
                               regex_tokenizer, registry)

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("parameters")

SUBNORMAL = sys.float_info.min / 3
HOSTILE_VALUES = [
    math.inf, -math.inf, math.nan, 5e-324, SUBNORMAL, 1e-300, 1e-200, 1e200, 1e308,
    sys.float_info.max, -0.0, 0, -1, 2 ** 63, 2 ** 64, 10 ** 400, 10 ** 5000, True, False, None,
    "", "x", "nan", "inf", b"x", [], {}, (), [1e308] * 3, [5e-324] * 3, [math.inf] * 3,
    [True] * 3, [1] * 100_000, ["a"] * 100_000, [[1e308, 1.0]], [[10 ** 400, 1]], object(),
]
HOSTILE = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6),
    st.lists(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=3), max_size=4),
    st.text(max_size=4),
)
# parameters naming a file: a missing one is a CorpusError that gives its path, also before
# any data is read
FILE_PARAMETERS = {"path", "public_items", "public_frequencies"}
PUBLIC = ["the", "a", "new york", "cat"]


def non_finite(obj, where="record"):
    """Where ``obj`` holds a float that is NaN or infinite (None if nowhere)."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else where
    if isinstance(obj, dict):
        return next((w for k, v in obj.items() if (w := non_finite(v, f"{where}.{k}"))), None)
    if isinstance(obj, (list, tuple)):
        return next((w for i, v in enumerate(obj) if (w := non_finite(v, f"{where}[{i}]"))),
                    None)
    return None


def refused_or(build, check, *parameters):
    """``build()`` raises a ParameterError (a CorpusError if a file parameter is among
    ``parameters``), or its result passes ``check``. Any other exception fails the test."""
    try:
        obj = build()
    except ParameterError as e:
        assert e.name and e.allowed and str(e).count("\n") == 0 and len(str(e)) < 1000
        return
    except CorpusError:
        assert FILE_PARAMETERS.intersection(parameters)
        return
    check(obj)


# ---- mechanisms ------------------------------------------------------------------------------

def mechanism_base(name):
    base = {"epsilon": 1.0, "delta": 1e-5}
    if name == "top_k":
        base["k"] = 10
    if "public" in name:
        base["public_items"] = PUBLIC
    if name == "gw_kt":
        base["public_frequencies"] = {"the": 2.0, "a": 1.0}
    return base


def check_mechanism(m):
    record = {"noise_scale": m.noise_scale, "threshold": m.threshold, "params": m.params(),
              "privacy": m.privacy(), "stages": [s.to_dict() for s in m.stages()],
              "total": list(Ledger(m.stages()).total()[:2])}
    assert non_finite(record) is None, non_finite(record)
    json.dumps(record, allow_nan=False, default=str)
    assert m.noise_scale > 0 and m.threshold > -math.inf


MECHANISM_CASES = [(n, p) for n in mechanism_names() for p, _ in mechanism_parameters(n)]


@pytest.mark.parametrize("name,parameter", MECHANISM_CASES)
def test_every_hostile_value_of_every_mechanism_parameter(name, parameter):
    for value in HOSTILE_VALUES:
        kw = {**mechanism_base(name), parameter: value}
        refused_or(lambda: make_mechanism(name, **kw), check_mechanism, parameter)


@pytest.mark.parametrize("name", mechanism_names())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mechanism_parameters_property(name, data):
    names = [p for p, _ in mechanism_parameters(name)]
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    kw = {**mechanism_base(name), **{p: data.draw(HOSTILE) for p in chosen}}
    refused_or(lambda: make_mechanism(name, **kw), check_mechanism, *chosen)


def test_the_issue_cases_are_refused_before_any_data():
    """The values a review found crashing or accepted with NaN scales."""
    for split in (math.inf, 5e-324, 1e200, 1e-200, True):
        with pytest.raises(ParameterError, match="budget_split"):
            make_mechanism("dpne", epsilon=1.0, delta=1e-5, budget_split=split)
    for split in ([5e-324, 1.0, 1.0, 1.0, 1.0], [True] * 5, [1.0, 1.0, 1.0, 1.0, math.inf]):
        with pytest.raises(ParameterError, match="budget_split"):
            make_mechanism("dpne", epsilon=1.0, delta=1e-5, budget_split=split)
    m = make_mechanism("dpne", epsilon=1.0, delta=1e-5, max_n=3, budget_split=[1e308] * 3)
    uniform = make_mechanism("dpne", epsilon=1.0, delta=1e-5, max_n=3)
    assert m.level_sigmas == pytest.approx(uniform.level_sigmas, rel=1e-12)
    with pytest.raises(ParameterError, match="allocation"):
        make_mechanism("dp_sips", epsilon=1.0, delta=1e-5, allocation=True)
    with pytest.raises(ParameterError, match="noisy_counts"):
        make_mechanism("count_laplace", epsilon=1.0, delta=1e-5, noisy_counts="no")
    for eps in (1e200, 10 ** 400, 5e-324):
        with pytest.raises(ParameterError, match="epsilon"):
            make_mechanism("partition_optimal", epsilon=eps, delta=1e-5)


# ---- [counts] stages -----------------------------------------------------------------------

def _counts_base(name):
    return {"epsilon": 1.0, **({"delta": 1e-5} if "gaussian" in name else {})}


def check_counts(c):
    stage = c.stage().to_dict()
    assert math.isfinite(c.noise_scale) and c.noise_scale > 0
    assert non_finite(stage) is None and non_finite(c.info()) is None


COUNTS_CASES = [(n, p) for n, f in registry.counts.get_all().items()
                for p in inspect.signature(f).parameters]


@pytest.mark.parametrize("name,parameter", COUNTS_CASES)
def test_every_hostile_value_of_every_counts_parameter(name, parameter):
    make = registry.counts.get(name)
    for value in HOSTILE_VALUES:
        kw = {**_counts_base(name), parameter: value}
        refused_or(lambda: make(**kw), check_counts, parameter)


# ---- readers, extractors, tokenizers, exporters --------------------------------------------

@pytest.fixture(scope="module")
def tiny_inputs(tmp_path_factory):
    import polars as pl
    d = tmp_path_factory.mktemp("tiny")
    (d / "c.jsonl").write_text('{"user": 1, "text": "a b c"}\n')
    (d / "c.csv").write_text("user,text\n1,a b c\n")
    (d / "folder").mkdir()
    (d / "folder" / "a.txt").write_text("a b c")
    frame = pl.DataFrame({"user": [1], "text": ["a b c"]})
    frame.write_parquet(d / "c.parquet")
    frame.write_ipc(d / "c.arrow")
    return {"dp_vocab.jsonl.v1": d / "c.jsonl", "dp_vocab.csv.v1": d / "c.csv",
            "dp_vocab.text_folder.v1": d / "folder", "dp_vocab.parquet.v1": d / "c.parquet",
            "dp_vocab.arrow.v1": d / "c.arrow"}


def _cases(reg, skip=()):
    return [(n, p) for n, f in reg.get_all().items() for p in inspect.signature(f).parameters
            if p not in skip]


def _read_all(reader):
    """Reading may stop with a CorpusError (a bad line, as configured), never another error."""
    try:
        list(reader)
    except CorpusError:
        pass


@pytest.mark.parametrize("name,parameter", _cases(registry.readers))
def test_every_hostile_value_of_every_reader_parameter(name, parameter, tiny_inputs):
    make = registry.readers.get(name)
    for value in HOSTILE_VALUES:
        kw = {"path": str(tiny_inputs[name]), parameter: value}
        refused_or(lambda: make(**kw), _read_all, parameter)


@pytest.mark.parametrize("name,parameter", _cases(registry.extractors, skip=("tokenizer",)))
def test_every_hostile_value_of_every_extractor_parameter(name, parameter):
    make = registry.extractors.get(name)
    for value in HOSTILE_VALUES:
        kw = {"tokenizer": regex_tokenizer(), parameter: value}
        refused_or(lambda: make(**kw), lambda e: e("a b c d"), parameter)


@pytest.mark.parametrize("name,parameter", _cases(registry.tokenizers))
def test_every_hostile_value_of_every_tokenizer_parameter(name, parameter):
    make = registry.tokenizers.get(name)
    for value in HOSTILE_VALUES:
        refused_or(lambda: make(**{parameter: value}), lambda t: t("a b c"), parameter)


@pytest.mark.parametrize("name,parameter", _cases(registry.exporters))
def test_every_hostile_value_of_every_exporter_parameter(name, parameter):
    make = registry.exporters.get(name)
    for value in HOSTILE_VALUES:
        refused_or(lambda: make(**{parameter: value}), lambda e: None, parameter)


def test_recipe_runs_refuse_the_issue_cases_before_reading_data(tmp_path):
    """The same values through a recipe (confection's validation first, then ours): refused by
    plan_run, which reads no data, naming the recipe field."""
    from pathlib import Path

    from dp_vocab.recipes import plan_run
    from dp_vocab.ingest.corpora.bundled import PRESETS
    recipe = PRESETS / "reply-ngrams.cfg"
    for value in (math.inf, 5e-324, True, 1e200, 1e-200, [5e-324, 1.0, 1.0, 1.0, 1.0],
                  10 ** 400, "inf"):
        with pytest.raises(ParameterError, match=r"^mechanism\.budget_split: expected"):
            plan_run(recipe, tmp_path / "o", overrides={"mechanism.budget_split": value})
    plan = plan_run(recipe, tmp_path / "o", overrides={"mechanism.budget_split": [1e308] * 5})
    assert non_finite(list(plan.mechanism.level_sigmas)) is None
    assert non_finite(list(plan.ledger.total()[:2])) is None and not (tmp_path / "o").exists()
