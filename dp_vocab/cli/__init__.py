"""The ``dp-vocab`` command line. Commands parse arguments and call importable functions.

Errors end with one line on stderr (``error: ...``) and a non-zero exit code: 2 for bad input or
parameters (:class:`DPVocabError`), 1 for an unexpected error, 130 when interrupted. An
unexpected error's message is not shown (it may quote input data); ``dp-vocab --debug ...``
shows the full traceback. Typer's pretty tracebacks (which print local variables) are off.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from typing import cast
from pathlib import Path

import typer

app = typer.Typer(name="dp-vocab", add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None, pretty_exceptions_enable=False,
                  help="Build vocabularies and n-gram sets from user text with user-level "
                       "differential privacy.")

_STATE = {"debug": False, "terminated": False}


def _print_version(value: bool) -> None:
    if value:
        from ..version import __version__
        typer.echo(f"dp-vocab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(debug: bool = typer.Option(
        False, "--debug", help="On an unexpected error, show the full traceback (it may quote "
                               "input data: do not share it)"),
             version: bool = typer.Option(False, "--version", callback=_print_version,
                                          is_eager=True, help="Print the version and exit")):
    _STATE["debug"] = debug
    warnings.showwarning = _show_warning


def _printable(message: str) -> str:
    """One line, encodable (a lone surrogate from a non-UTF-8 file name is escaped)."""
    one = " ".join(str(message).split("\n"))
    return one.encode("utf-8", "backslashreplace").decode("utf-8")


def _print_stderr(label: str, style: str, message: str) -> None:
    from rich.console import Console
    from rich.text import Text
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        Text.assemble((label, style), " ", _printable(message)))  # Text: no markup parsing


def _fail(message: str, code: int = 2) -> None:
    _print_stderr("error:", "bold red", message)
    raise typer.Exit(code)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from ..ingest.corpora.readers import MixedUserIdWarning
    if issubclass(category, MixedUserIdWarning):
        _print_stderr("warning (NON-PRIVATE operator diagnostic, not written to any file):",
                      "yellow", str(message))
    else:
        _print_stderr("warning:", "yellow", f"{category.__name__}: {message}")


@contextlib.contextmanager
def _errors():
    """Every failure ends as one ``error:`` line and an exit code, never a traceback (unless
    --debug)."""
    from ..errors import DPVocabError
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except DPVocabError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted; nothing was written", code=130)
    except MemoryError:
        if _STATE["debug"]:
            raise
        _fail("out of memory. Lower the limits that size the work (max_items_per_user, "
              "max_distinct_per_user, n_max, --canary-items) or use the dask backend", code=1)
    except Exception as e:  # noqa: BLE001 - the last line of defence of the CLI
        if _STATE["terminated"]:   # a SIGTERM whose interrupt a C callback swallowed (numba)
            _fail("interrupted; nothing was written", code=130)
        if _STATE["debug"]:
            raise
        # the message is not printed: an exception's text may quote private input
        _fail(f"unexpected internal error ({type(e).__name__}); its message is not shown "
              f"because it may quote input data. Rerun as `dp-vocab --debug ...` for the full "
              f"traceback, and report the problem", code=1)


def _recipe_first(recipe: Path, usage: str, what: str = "RECIPE") -> None:
    """``run --budget.epsilon 1 RECIPE``: the override's name arrives as the recipe (an
    unknown option's value is not known to the parser)."""
    from ..errors import RecipeError
    if str(recipe).startswith("--"):
        raise RecipeError(f"{what}: expected it first, found the override {str(recipe)!r}; "
                          f"give it before the overrides: dp-vocab {usage} "
                          f"{recipe}{'' if '=' in str(recipe) else ' VALUE'}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             short_help="Run a recipe and write its release.")
def run(ctx: typer.Context,
        recipe: Path = typer.Argument(..., metavar="RECIPE",
                                      help="A recipe file (.cfg) or a shipped recipe's name, "
                                           "e.g. quickstart (see `dp-vocab recipes`)"),
        output: Path = typer.Option(..., "--output", "-o",
                                    help="Output directory, created; it must not exist "
                                         "unless --force"),
        force: bool = typer.Option(False, "--force",
                                   help="Replace an existing output directory (only an empty "
                                        "one or a previous dp-vocab output)"),
        quiet: bool = typer.Option(False, "--quiet", "-q",
                                   help="No progress or summary (warnings, notes and skipped "
                                        "lines still go to stderr)")):
    """Run RECIPE and write the release to OUTPUT. Override any recipe value with
    --section.key VALUE, e.g. --budget.epsilon 1 --paths.corpus my.jsonl"""
    from ..errors import ExportNoteWarning
    from ..recipes import parse_overrides, run_recipe
    from .display import ReadProgress, print_skipped, print_summary

    import signal

    def _terminate(signum, frame):  # SIGTERM: unwind like Ctrl-C, so no partial output remains
        _STATE["terminated"] = True
        raise KeyboardInterrupt

    def _unless_terminated(step):
        """A progress callback that raises the interrupt again if a C callback swallowed it
        (Python ignores an exception raised inside a ctypes callback, as numba's compiler)."""
        def checked(*args):
            if _STATE["terminated"]:
                raise KeyboardInterrupt
            return step(*args)
        return checked

    signal.signal(signal.SIGTERM, _terminate)
    # the command's own process: an interrupted Dask run's event loop logs the tasks it
    # dropped ("Task exception was never retrieved", with a traceback) while it unwinds; the
    # run ends with its one error line instead
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    with _errors():
        from ..compiled import EVERY_RUN, kernels_cached
        _recipe_first(recipe, "run RECIPE --output DIR")
        overrides = parse_overrides(list(ctx.args))
        # not the n-gram kernels: a user who never runs dpne would be told on every run
        compiling = not kernels_cached(EVERY_RUN)
        if compiling and not quiet:
            _print_stderr("note:", "yellow", "first run of this installation: the numba kernels "
                          "compile during this run (about 10 s, more on a busy machine); later "
                          "runs load them from numba's cache")
        with ReadProgress(disable=quiet, compiling=compiling) as prog, \
                warnings.catch_warnings():
            # printed below as notes, after the summary
            warnings.simplefilter("ignore", ExportNoteWarning)
            result = run_recipe(recipe, output, overrides=overrides, force=force,
                                progress=_unless_terminated(prog.update),
                                on_stage=_unless_terminated(prog.stage))
        if not quiet:
            print_summary(result)
        else:
            print_skipped(result)
        for note in result.notes:   # where an export differs from the recipe's request
            _print_stderr("note:", "yellow", note)
        if not result.release.items:
            # a function of the released set only: never of the corpus (its size is private)
            _print_stderr("warning:", "yellow", "released 0 items: nothing passed the "
                          "threshold. With few users, a small ε or max_items_per_user, or "
                          "documents without items, this is expected. The files were written "
                          "with an empty vocabulary.")


recipes_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                          rich_markup_mode=None, add_completion=False)
app.add_typer(recipes_app, name="recipes", short_help="List the shipped recipes.")


@recipes_app.callback(invoke_without_command=True)
def recipes(ctx: typer.Context):
    """List the shipped recipes. Run one by name (dp-vocab run quickstart -o out/q), print it
    (dp-vocab recipes show NAME) or copy it to edit (dp-vocab init NAME FILE)."""
    if ctx.invoked_subcommand is not None:
        return
    from ..recipes.shipped import recipe_summary, shipped_recipes
    with _errors():
        names = shipped_recipes()
        width = max(len(n) for n in names)
        for name in names:
            typer.echo(f"{name:<{width}}  {recipe_summary(name)}")
        typer.echo("\nRun one: dp-vocab run NAME -o DIR; copy one to edit: dp-vocab init NAME "
                   "FILE")


@recipes_app.command("show")
def recipes_show(name: str = typer.Argument(..., metavar="NAME",
                                            help="A shipped recipe, e.g. quickstart")):
    """Print the shipped recipe NAME (a .cfg file with its comments)."""
    from ..recipes.shipped import recipe_text
    with _errors():
        typer.echo(recipe_text(name), nl=False)


@app.command(short_help="Copy a shipped recipe to a file to edit.")
def init(name: str = typer.Argument(..., metavar="NAME",
                                    help="A shipped recipe, e.g. quickstart (see `dp-vocab "
                                         "recipes`)"),
         file: Path = typer.Argument(..., metavar="FILE", help="The recipe file to write"),
         force: bool = typer.Option(False, "--force", help="Replace FILE if it exists")):
    """Copy the shipped recipe NAME to FILE, to edit and run with dp-vocab run FILE -o DIR."""
    from ..recipes.shipped import write_recipe
    with _errors():
        path = write_recipe(name, file, force=force)
        typer.echo(_printable(f"wrote {path}; edit it, then: dp-vocab run {path} --output DIR"))


@app.command(short_help="List the registered mechanisms.")
def mechanisms():
    """List the registered mechanisms with their parameters and defaults."""
    from rich.console import Console
    from rich.text import Text

    from ..registry import mechanism_catalogue

    console = Console(soft_wrap=True, highlight=False)
    with _errors():
        for short, full, summary, params in mechanism_catalogue():
            # an older version, or a name two packages register, is given in full
            named = f"  {full}: {summary}" if short != full else f": {summary}"
            console.print(Text.assemble((short, "bold"), named))
            console.print(f"    parameters: {params}", markup=False)


def _split(text: str, cast, option: str, example: str) -> list:
    """A comma-separated option value; empty or unparsable is a ParameterError."""
    from ..errors import ParameterError
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise ParameterError(option, text, f"at least one comma-separated value, e.g. {example}")
    try:
        return [cast(x) for x in parts]
    except ValueError:
        raise ParameterError(option, text, f"comma-separated {cast.__name__} values, e.g. "
                                           f"{example}") from None


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             short_help="Compare mechanisms side by side (NON-PRIVATE).")
def evaluate(ctx: typer.Context,
             source: Path = typer.Argument(..., metavar="CORPUS-OR-RECIPE",
                                           help="A corpus file (JSONL, CSV, Parquet, Arrow), "
                                                "a recipe (.cfg) or a shipped recipe's name"),
             mechanisms: str = typer.Option(None, help="Comma-separated mechanism names "
                                            "[default: weighted_gaussian, policy_laplace, "
                                            "policy_gaussian, gw, and a recipe's own mechanism "
                                            "with its parameters]"),
             epsilon: str = typer.Option("1,3,8", help="Comma-separated ε values"),
             delta: float = typer.Option(1e-5, help="δ for every configuration"),
             repeats: int = typer.Option(3, help="Runs per configuration"),
             max_items_per_user: str = typer.Option(None, "--max-items-per-user",
                                                    help="Comma-separated Δ0 values [default: "
                                                         "a recipe's Δ0, else 100]"),
             param: list[str] = typer.Option([], "--param", "-p",
                                             help="mechanism.key=value, e.g. gw_kt.public_frequencies=f.tsv"),
             jobs: int = typer.Option(1, help="Parallel processes for the configurations"),
             holdout: float = typer.Option(0.0, help="Share of users held out to measure coverage "
                                                     "and tokens per word (NON-PRIVATE), e.g. 0.2"),
             output: Path = typer.Option(Path("eval-out"), "--output", "-o",
                                         help="Output directory for results.csv, "
                                              "results.json, the plots and report.html; it "
                                              "must not exist unless --force"),
             force: bool = typer.Option(False, "--force",
                                        help="Replace an existing output directory (only an "
                                             "empty one or a previous dp-vocab output)")):
    """Compare mechanisms side by side on one corpus: every (mechanism, ε, Δ0) configuration,
    REPEATS times. Prints a table and writes results.csv, results.json, PNG plots and
    report.html. Its columns marked NON-PRIVATE come from the raw data: for the data owner
    only, never to publish. Override a recipe's values as with run: --section.key VALUE"""
    from rich.console import Console
    from rich.progress import Progress

    from ..research.evaluation import (compared_mechanisms, output_guards,
                                       recipe_mechanism, write_report)
    from ..research.evaluation import evaluate as run_eval
    from ..export.output_dir import check_output_dir
    from ..recipes import parse_override_value, parse_overrides
    from .display import ReadProgress

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        _fail("evaluate needs matplotlib: pip install 'matplotlib>=3.6' (or '.[eval]' in a "
              "dp-vocab checkout)")
    with _errors():
        _recipe_first(source, "evaluate CORPUS-OR-RECIPE", "CORPUS-OR-RECIPE")
        overrides = parse_overrides(list(ctx.args))
        protect, below = output_guards(source, overrides)
        check_output_dir(output, force, protect, below)
        params: dict = {}
        for kv in param:
            if "=" not in kv or "." not in kv.split("=", 1)[0]:
                _fail(f"--param {kv!r}: expected mechanism.key=value")
            k, v = kv.split("=", 1)
            mech, key = k.split(".", 1)
            params.setdefault(mech, {})[key] = parse_override_value(v)
        mechs = None if mechanisms is None else \
            _split(mechanisms, str, "--mechanisms", "policy_gaussian,gw")
        eps = _split(epsilon, float, "--epsilon", "1,3,8")
        d0s = None if max_items_per_user is None else \
            _split(max_items_per_user, int, "--max-items-per-user", "10,100")
        n_mechs = len(compared_mechanisms(recipe_mechanism(source, overrides), mechs))
        total = n_mechs * len(eps) * (len(d0s) if d0s else 1) * max(repeats, 1)
        configs = Progress(console=Console(stderr=True), transient=True)
        task = None

        def advance(_record) -> None:  # the bar starts with the first configuration done
            nonlocal task
            if task is None:
                configs.start()
                task = configs.add_task("configurations", total=total)
            configs.advance(task)

        try:
            with ReadProgress() as read_prog:
                result = run_eval(source, mechs, eps, delta=delta, repeats=repeats,
                                  max_items_per_user=d0s, mechanism_params=params, jobs=jobs,
                                  on_run=advance, progress=read_prog.update, holdout=holdout,
                                  on_step=lambda line: _print_stderr("note:", "yellow", line),
                                  overrides=overrides)
        finally:
            if task is not None:
                configs.stop()
        files = write_report(result, output, force, protect=protect)
        Console().print(result.table())
        typer.echo(_printable(f"wrote {output}/: {', '.join(files)}"))


@app.command(short_help="Estimate a mechanism's privacy loss empirically.")
def audit(mechanism: str = typer.Argument(..., metavar="MECHANISM",
                                          help="Registered mechanism, e.g. gw_kt"),
          epsilon: float = typer.Option(1.0, help="ε of the mechanism"),
          delta: float = typer.Option(1e-5, help="δ of the mechanism"),
          param: list[str] = typer.Option([], "--param", "-p",
                                          help="Other parameters as key=value (JSON values)"),
          canary_items: int = typer.Option(
              None, help="Items held by the canary user [default: 1000; ngrams: as long a run "
                         "as the base allows, up to 1000]", show_default=False),
          runs: int = typer.Option(2000, help="Releases per neighbouring dataset"),
          confidence: float = typer.Option(0.95, help="Clopper-Pearson confidence"),
          placement: str = typer.Option(
              "unique", help="Where the canary's items are: unique (outside any public list), "
                             "public (on the mechanism's public list), ngrams (common tokens "
                             "in a new order: DPNE's levels >= 2)"),
          output: Path = typer.Option(None, "--output", "-o", help="Write the result as JSON")):
    """Estimate privacy loss empirically: a canary user with unique items, neighbouring
    datasets, many releases; reports the canary release rate against δ and an ε lower bound."""
    from rich.console import Console
    from rich.progress import Progress
    from ..research.audit import audit as run_audit
    from ..research.audit import check_audit_parameters, check_result_path, write_result
    from ..recipes import parse_override_value
    from ..registry import make_mechanism

    with _errors():
        params = {}
        for kv in param:
            if "=" not in kv:
                _fail(f"--param {kv!r}: expected key=value")
            k, v = kv.split("=", 1)
            if k in ("epsilon", "delta"):
                _fail(f"--param {kv!r}: set {k} with --{k}")
            params[k] = parse_override_value(v)
        check_audit_parameters(canary_items, runs, confidence, placement)
        if output is not None:
            check_result_path(output)  # before the (long) audit
        mech = make_mechanism(mechanism, epsilon=epsilon, delta=delta, **params)
        with Progress(*Progress.get_default_columns(), console=Console(stderr=True),
                      transient=True) as bar:
            task = bar.add_task(f"auditing {mechanism}: pairs of releases", total=runs)
            result = run_audit(mech, canary_items=canary_items, runs=runs,
                               confidence=confidence, placement=placement,
                               on_run=lambda i: bar.update(task, completed=i))
        typer.echo(result.summary())
        if output is not None:
            write_result(result, output)
    raise typer.Exit(3 if result.violation else 0)


def main() -> None:
    import click
    # typer >= 0.20 vendors click: its exceptions derive from typer.TyperException
    usage_errors = (click.ClickException, *([typer.TyperException]
                                            if hasattr(typer, "TyperException") else []))
    try:
        code = app(standalone_mode=False)
    except usage_errors as e:  # click's and typer's: both have show() and format_message()
        e = cast(click.ClickException, e)
        if type(e).__name__ == "NoArgsIsHelpError":
            e.show()  # `dp-vocab` alone: the help text
        else:  # a bad option value: one line, like every other error
            ctx = getattr(e, "ctx", None)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            _print_stderr("error:", "bold red", e.format_message() + hint)
        code = getattr(e, "exit_code", 2)
    except (click.exceptions.Abort, typer.Abort, KeyboardInterrupt):
        # KeyboardInterrupt: Ctrl-C before a command's own handling, e.g. while it imports
        _print_stderr("error:", "bold red", "interrupted; nothing was written")
        code = 130
    except BrokenPipeError:  # e.g. `dp-vocab mechanisms | head`
        code = 0
    sys.exit(code or 0)


def tune_process() -> None:
    """What the ``dp-vocab`` command sets in its own process (never the library in yours):
    numpy's large arrays on ordinary pages. numpy asks Linux for transparent huge pages for
    every array of 4 MiB or more; where the kernel compacts memory to find them, each fresh
    array stalls while it does (a large run's final merge allocates many). numpy reads the
    same switch from NUMPY_MADVISE_HUGEPAGE, which the user's environment still decides."""
    import os
    if os.environ.get("NUMPY_MADVISE_HUGEPAGE") is None:
        import numpy as np
        multiarray = getattr(getattr(np, "_core", None), "multiarray", None)
        set_hugepage = getattr(multiarray, "_set_madvise_hugepage", None)
        if set_hugepage is not None:   # numpy's own switch (private: absent in some builds)
            set_hugepage(False)


def command() -> None:
    """The ``dp-vocab`` command: ``main``, in a process that ends right after it. What is left
    in memory is not collected object by object on the way out (``gc.freeze``): after a large
    run that teardown is slow, and the operating system frees the memory at once anyway."""
    import gc
    tune_process()
    try:
        main()
    finally:
        gc.freeze()

