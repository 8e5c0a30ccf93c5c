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
