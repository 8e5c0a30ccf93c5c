"""Help that answers: docstrings of the public functions, type errors that name the field and
the type, command-line help that fits an 80-column terminal, and the first run's compile."""

import inspect
import json

import click
import pytest
import typer
from typer.testing import CliRunner

import dp_vocab
from dp_vocab import compiled
from dp_vocab.cli import app
from dp_vocab.errors import ParameterError
from dp_vocab.registry import mechanism_parameters, registry

runner = CliRunner()


def _public_functions():
    return [(n, getattr(dp_vocab, n)) for n in dp_vocab.__all__
            if inspect.isfunction(getattr(dp_vocab, n))]


def test_the_public_functions_are_the_expected_ones():
    names = {n for n, _ in _public_functions()}
    assert {"make_mechanism", "run_recipe", "evaluate", "itemsets_from_frame"} <= names


@pytest.mark.parametrize("name", ["make_mechanism", "run_recipe", "evaluate",
                                  "itemsets_from_frame"])
def test_public_function_documents_every_parameter_and_its_result(name):
    func = getattr(dp_vocab, name)
    doc = inspect.getdoc(func) or ""
    assert "Parameters\n---" in doc and "Returns\n---" in doc, name
    for param in inspect.signature(func).parameters.values():
        shown = f"**{param.name}" if param.kind is param.VAR_KEYWORD else param.name
        assert shown in doc, f"{name}: parameter {param.name} is not documented"


def test_help_of_the_public_functions_renders(capsys):
    for name, func in _public_functions():
        help(func)
        assert "Parameters" in capsys.readouterr().out, name


def test_make_mechanism_lists_every_registered_mechanism_and_its_parameters():
    doc = dp_vocab.make_mechanism.__doc__
    for full in registry.mechanisms.get_all():
        short = full.split(".")[1]
        assert f"``{short}`` ({full})" in doc
        entry = doc.split(f"``{short}`` ({full})", 1)[1].split("``", 1)[0]
        for param, _ in mechanism_parameters(full):
            assert param in entry, f"{short}: {param} missing"


@pytest.mark.parametrize("hint", ["needs_sequences", "needs_item_sets"])
def test_a_wrong_input_hint_names_functions_that_exist(hint):
    import importlib
    import re
    from dp_vocab import bounding
    named = re.findall(r"(dp_vocab(?:\.\w+)+)\(", str(getattr(bounding, hint)()))
    assert named, hint
    for path in named:
        module, _, attr = path.rpartition(".")
        assert callable(getattr(importlib.import_module(module), attr)), path


def test_run_recipe_says_what_overrides_look_like_and_what_it_returns():
    doc = inspect.getdoc(dp_vocab.run_recipe)
    assert '"budget.epsilon"' in doc and "--budget.epsilon" in doc
    assert ".release" in doc and ".files" in doc and ".record" in doc


@pytest.mark.parametrize("value", ["3", "abc"])
def test_a_string_where_a_number_belongs_is_named_as_a_string(value):
    with pytest.raises(ParameterError, match=rf"^epsilon: expected a real number from 1e-06 to 100, got a "
                                             rf"string, '{value}'\.") as info:
        dp_vocab.make_mechanism("gw", epsilon=value, delta=1e-5)
    assert ("without quotes" in str(info.value)) == (value == "3")


def test_recipe_value_in_quotes_names_the_field_and_the_fix(tmp_path):
    from dp_vocab.recipes import plan_run
    from dp_vocab.recipes.shipped import recipe_text
    recipe = tmp_path / "r.cfg"
    recipe.write_text(recipe_text("quickstart").replace("epsilon = 3.0", 'epsilon = "3"'),
                      encoding="utf-8")
    with pytest.raises(ParameterError, match=r"^budget\.epsilon: .*got a string, '3'\. Write "
                                             r"the number without quotes \(epsilon = 3 "):
        plan_run(recipe, tmp_path / "o")


@pytest.mark.parametrize("args,field", [((["gw"], 3), "epsilons"),
                                        (("gw", [3]), "mechanisms"),
                                        ((["gw"], [3], 1e-5, 1, 100), "max_items_per_user")])
def test_evaluate_names_a_list_argument_given_as_one_value(args, field):
    with pytest.raises(ParameterError, match=rf"^{field}: expected a list, e\.g\. .*wrap one "
                                             rf"value in a list"):
        dp_vocab.evaluate("never-read.jsonl", *args)


# ---- command-line help -----------------------------------------------------------------------

def _commands(group: click.Group, path=()):
    for name, cmd in group.commands.items():
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


def _help(args) -> str:
    res = runner.invoke(app, [*args, "--help"], terminal_width=80, env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    return res.output


def test_command_summaries_are_whole():
    for path, cmd in [((), None), *_commands(typer.main.get_command(app))]:
        if cmd is not None and not isinstance(cmd, click.Group):
            continue
        text = _help(list(path))
        listing = text.split("Commands:", 1)[1]
        assert "..." not in listing, f"a summary is cut: {listing}"


def test_every_option_is_documented_and_no_help_word_is_broken():
    for path, cmd in _commands(typer.main.get_command(app)):
        rendered = _help(list(path))
        tokens = set(rendered.split())
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                assert param.help, f"{' '.join(path)} {param.opts}: no help"
            for word in (getattr(param, "help", None) or "").split():
                assert word in tokens, f"{' '.join(path)}: '{word}' broken in\n{rendered}"


def test_kernels_cached_looks_where_numba_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not compiled.kernels_cached()
    for rel in compiled.KERNEL_MODULES[:-1]:
        stem = rel.rsplit("/", 1)[-1][:-3]
        (tmp_path / f"{stem}.kernel-1.py311.nbi").write_bytes(b"")
    assert not compiled.kernels_cached()   # one module still to compile
    # ... the n-gram kernels, which only an n-gram run compiles: the CLI's first-run note
    # checks the modules every run compiles
    assert compiled.kernels_cached(compiled.EVERY_RUN)
    last = compiled.KERNEL_MODULES[-1].rsplit("/", 1)[-1][:-3]
    sub = tmp_path / "deep" / "dir"
    sub.mkdir(parents=True)
    (sub / f"{last}.kernel-1.py311.nbi").write_bytes(b"")
    assert compiled.kernels_cached()


@pytest.mark.parametrize("cached", [False, True])
def test_a_first_run_says_it_compiles(tmp_path, monkeypatch, cached):
    monkeypatch.setattr(compiled, "kernels_cached", lambda *modules: cached)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"user": f"u{i}", "text": "the cat"}) + "\n"
                              for i in range(30)), encoding="utf-8")
    res = runner.invoke(app, ["run", "quickstart", "-o", str(tmp_path / "o"),
                              "--paths.corpus", str(corpus)])
    assert res.exit_code == 0, res.output
    assert ("numba kernels compile during this run" in res.output) is not cached
