"""The ``dp-vocab`` command line. Commands parse arguments and call importable functions."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import typer

app = typer.Typer(name="dp-vocab", add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None,
                  help="Build vocabularies and n-gram sets from user text with user-level "
                       "differential privacy.")


def _fail(message: str, code: int = 2) -> None:
    from rich.console import Console
    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, markup=True,
                               soft_wrap=True)
    raise typer.Exit(code)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(ctx: typer.Context,
        recipe: Path = typer.Argument(..., help="Recipe file (.cfg), e.g. recipes/quickstart.cfg"),
        output: Path = typer.Option(..., "--output", "-o", help="Output directory (created)"),
        force: bool = typer.Option(False, "--force", help="Replace an existing output directory"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary")):
    """Run RECIPE and write the release to OUTPUT. Override any recipe value with
    --section.key VALUE, e.g. --mechanism.epsilon 1 --paths.corpus my.jsonl"""
    from rich.markup import escape

    from ..errors import DPVocabError
    from ..recipes import parse_overrides, run_recipe
    from .display import ReadProgress, print_summary

    import signal

    def _terminate(signum, frame):  # SIGTERM: unwind like Ctrl-C, so no partial output remains
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        overrides = parse_overrides(list(ctx.args))
        with ReadProgress(disable=quiet) as prog:
            result = run_recipe(recipe, output, overrides=overrides, force=force,
                                progress=prog.update)
    except DPVocabError as e:
        _fail(escape(str(e)))
    except KeyboardInterrupt:
        _fail("interrupted; nothing was written", code=130)
    if not quiet:
        print_summary(result)


@app.command()
def mechanisms():
    """List the registered mechanisms with their parameters and defaults."""
    from rich.console import Console

    from ..mechanisms import MECHANISMS
    from ..registry import mechanism_parameters, registry

    console = Console(soft_wrap=True, highlight=False)
    for full in sorted(registry.mechanisms.get_all()):
        short = full.split(".")[1]
        cls = MECHANISMS.get(short)
        summary = getattr(cls, "summary", "")
        console.print(f"[bold]{short}[/]  {full}: {summary}")
        params = ", ".join(p if d is inspect.Parameter.empty else f"{p}={d!r}"
                           for p, d in mechanism_parameters(short))
        console.print(f"    parameters: {params}", markup=False)


def _split(text: str, cast):
    return [cast(x) for x in text.split(",") if x.strip()]


@app.command()
def evaluate(source: Path = typer.Argument(..., help="JSONL corpus or recipe (.cfg)"),
             mechanisms: str = typer.Option("weighted_gaussian,policy_laplace,policy_gaussian,gw",
                                            help="Comma-separated mechanism names"),
             epsilon: str = typer.Option("1,3,8", help="Comma-separated ε values"),
             delta: float = typer.Option(1e-5, help="δ for every configuration"),
             repeats: int = typer.Option(3, help="Runs per configuration"),
             max_items_per_user: str = typer.Option("100", "--max-items-per-user",
                                                    help="Comma-separated Δ0 values"),
             param: list[str] = typer.Option([], "--param", "-p",
                                             help="mechanism.key=value, e.g. gw_kt.public_frequencies=f.tsv"),
             jobs: int = typer.Option(1, help="Parallel processes for the configurations"),
             output: Path = typer.Option(Path("eval-out"), "--output", "-o"),
             force: bool = typer.Option(False, "--force")):
    """Compare mechanisms side by side: table, results.csv/json, PNG plots, report.html."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress

    from ..errors import DPVocabError
    from ..evaluate import evaluate as run_eval
    from ..evaluate import write_report
    from ..outputs import check_output_dir
    from ..recipes import parse_override_value
    from .display import ReadProgress

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        _fail("evaluate needs matplotlib: pip install 'dp-vocab[eval]'")
    try:
        check_output_dir(output, force)
        params: dict = {}
        for kv in param:
            if "=" not in kv or "." not in kv.split("=", 1)[0]:
                _fail(f"--param {escape(kv)!r}: expected mechanism.key=value")
            k, v = kv.split("=", 1)
            mech, key = k.split(".", 1)
            params.setdefault(mech, {})[key] = parse_override_value(v)
        mechs = _split(mechanisms, str)
        eps = _split(epsilon, float)
        d0s = _split(max_items_per_user, int)
        total = len(mechs) * len(eps) * len(d0s) * repeats
        with ReadProgress() as read_prog:
            loader = read_prog.update
            with Progress(console=Console(stderr=True), transient=True) as prog:
                task = prog.add_task("configurations", total=total)
                result = run_eval(source, mechs, eps, delta=delta, repeats=repeats,
                                  max_items_per_user=d0s, mechanism_params=params, jobs=jobs,
                                  on_run=lambda _r: prog.advance(task), progress=loader)
        files = write_report(result, output, force)
    except DPVocabError as e:
        _fail(escape(str(e)))
    except KeyboardInterrupt:
        _fail("interrupted; nothing was written", code=130)
    Console().print(result.table())
    typer.echo(f"wrote {output}/: {', '.join(files)}")


@app.command()
def audit(mechanism: str = typer.Argument(..., help="Registered mechanism, e.g. gw_kt"),
          epsilon: float = typer.Option(1.0, help="ε of the mechanism"),
          delta: float = typer.Option(1e-5, help="δ of the mechanism"),
          param: list[str] = typer.Option([], "--param", "-p",
                                          help="Other parameters as key=value (JSON values)"),
          canary_items: int = typer.Option(1000, help="Unique items held by the canary user"),
          runs: int = typer.Option(2000, help="Releases per neighbouring dataset"),
          confidence: float = typer.Option(0.95, help="Clopper-Pearson confidence"),
          output: Path = typer.Option(None, "--output", "-o", help="Write the result as JSON")):
    """Estimate privacy loss empirically: a canary user with unique items, neighbouring
    datasets, many releases; reports the canary release rate against δ and an ε lower bound."""
    import json

    from rich.markup import escape

    from ..audit import audit as run_audit
    from ..errors import DPVocabError
    from ..recipes import parse_override_value
    from ..registry import make_mechanism

    try:
        params = {}
        for kv in param:
            if "=" not in kv:
                _fail(f"--param {escape(kv)!r}: expected key=value")
            k, v = kv.split("=", 1)
            params[k] = parse_override_value(v)
        mech = make_mechanism(mechanism, epsilon=epsilon, delta=delta, **params)
        result = run_audit(mech, canary_items=canary_items, runs=runs, confidence=confidence)
    except DPVocabError as e:
        _fail(escape(str(e)))
    typer.echo(result.summary())
    if output is not None:
        output.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    raise typer.Exit(3 if result.violation else 0)


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # e.g. `dp-vocab mechanisms | head`
        sys.exit(0)
