"""Progress and summary display. Shows input bytes and released (DP) numbers only."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, DownloadColumn, Progress, TaskID, TextColumn,
                           TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.status import Status
from rich.table import Table


class ReadProgress:
    """A progress bar over the bytes of the input file (never over private counts), then a
    status line while the release runs (``stage``), which says when the first run on this
    installation compiles the numba kernels."""

    def __init__(self, disable: bool = False, compiling: bool = False):
        self._console = Console(stderr=True)
        self._progress = Progress(TextColumn("reading + extracting"), BarColumn(),
                                  DownloadColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                  console=self._console, disable=disable, transient=False)
        self._task: TaskID | None = None
        self._started = False
        self._disable = disable
        self._compiling = compiling
        self._status: Status | None = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._status is not None:
            self._status.stop()
            self._status = None
        # started on the first update: an error before reading prints no empty bar line
        return self._progress.__exit__(*exc) if self._started else None

    def stage(self, name: str) -> None:
        """The run moved on to ``name`` ("release", then "export"): the bar or the previous
        status line ends, a status line follows."""
        if self._started:
            self._progress.__exit__(None, None, None)
            self._started = False
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._disable:
            return
        if name == "release":
            text = "release" + (" (first run: compiling numba kernels, cached afterwards)"
                                if self._compiling else "")
        else:   # a tokenizer export trains its model here: the longest step of private-*
            text = "writing the outputs (a tokenizer export trains its model now)"
        status = self._console.status(text)
        status.start()
        self._status = status

    def update(self, reader) -> None:
        done, total = reader.progress()
        if not self._started:
            self._progress.__enter__()
            self._started = True
        if self._task is None:
            self._task = self._progress.add_task("read", total=total or None)
        self._progress.update(self._task, completed=done, total=total or None)


def summary_table(result) -> Table:
    """The run summary: released (DP) numbers, parameters and paths only, so that the same
    release gives the same summary on neighbouring datasets. Every stage of the privacy ledger
    is listed with its (ε, δ), then the composed total, as in privacy.json."""
    rel = result.release
    p = rel.privacy
    t = Table(title="dp-vocab release", show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    t.add_row("mechanism", rel.mechanism)
    for k in ("max_items_per_user", "alpha"):
        if k in rel.params:
            t.add_row(k, f"{rel.params[k]:g}")
    t.add_row("threshold ρ", f"{p['threshold']:.4f}")
    t.add_row("noise scale", f"{p['noise_scale']:.4f} ({p['noise']})")
    if "public_domain" in p:   # public parameters: the list and the false-discovery rate
        d = p["public_domain"]
        t.add_row("public list", escape(f"{d['source']}, {d['items']:,} items, released at "
                                        f"false-discovery rate ≤ {rel.params['public_fdr']:g}"))
    if rel.params.get("level_fdr") is not None:   # DPNE's levels n ≥ 2 by BH (ngrams.md §3a)
        t.add_row("n-gram levels n ≥ 2", escape(
            f"released at false-discovery rate ≤ {rel.params['level_fdr']:g} per level"
            + (f", ≤ {rel.params['total_fdr']:g} over the release"
               if rel.params.get("total_fdr") is not None else "")))
    if rel.counts is not None and rel.counts_info:
        c = rel.counts_info
        t.add_row("noisy counts", escape(f"{c['value']}; {c['noise']} noise, scale "
                                         f"{c['scale']:.4f}"))
    for row in ledger_rows(result.record):
        t.add_row(*row)
    user = (result.record.get("corpus") or {}).get("user")
    if user:   # what the guarantee protects, in this corpus's terms (a reader parameter)
        t.add_row("one user", escape(user))
    t.add_row("released items (DP output)", f"{len(rel.items):,}")
    size = _tokenizer_size(result)
    if size is not None:
        t.add_row("hf tokenizer", f"{size:,} tokens (learned from the released items' DP "
                                  "counts and the public inputs)")
    t.add_row("randomness", rel.randomness["mode"])
    t.add_row("output", escape(f"{result.output}/ ({', '.join(result.files)})"))
    for how in _loaders(result):
        t.add_row("load with", escape(how))
    return t


def _loaders(result) -> list[str]:
    """How to load what was exported, at its own folder (the run's root is not a tokenizer)."""
    out = []
    if "hf/tokenizer.json" in result.files:
        out.append(f'AutoTokenizer.from_pretrained("{result.output}/hf")')
    if any(f.rstrip("/") == "spacy/pipeline" for f in result.files):
        out.append(f'spacy.load("{result.output}/spacy/pipeline")')
    return out


def _tokenizer_size(result) -> int | None:
    """The exported Hugging Face tokenizer's size (special tokens included), if there is one."""
    import json
    if "hf/tokenizer.json" not in result.files:
        return None
    try:
        model = json.loads((result.output / "hf" / "tokenizer.json").read_text("utf-8"))["model"]
    except (OSError, ValueError, KeyError):
        return None
    return len(model.get("vocab") or [])


def ledger_rows(record: dict) -> list[tuple[str, str]]:
    """One row per stage of the ledger (name, mechanism, ε, δ), the total and the declared
    budget: privacy.json's "composition" and "budget", which hold parameters only."""
    comp = record["composition"]
    stages = comp["stages"]
    rows = [(f"stage {i}: {s['name']}", f"{s['mechanism']}: ε={s['epsilon']:g}, δ={s['delta']:g}")
            for i, s in enumerate(stages, 1)]
    total = comp["total"]
    how = f"{len(stages)} stages, {total['method']}" if len(stages) > 1 else "1 stage"
    rows.append(("total guarantee", f"(ε={total['epsilon']:g}, δ={total['delta']:g})-DP per "
                                    f"user ({how})"))
    budget = record.get("budget") or {}
    if budget.get("declared"):
        rows.append(("budget", f"ε={budget['epsilon']:g}, δ={budget['delta']:g} ([budget])"))
    return [(escape(a), escape(b)) for a, b in rows]


def print_summary(result) -> None:
    Console().print(summary_table(result))
    # operator diagnostics: computed from the private data without noise, so on stderr only,
    # labelled, and never written to the output
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"[dim]NON-PRIVATE operator diagnostic (stderr only, never written to the output): "
              f"time extract {result.timings['extract_s']:.1f} s, "
              f"release {result.timings['release_s']:.2f} s"
              + (f", export {result.timings['export_s']:.1f} s" if "export_s" in result.timings
                 else "") + "[/]")
    print_skipped(result)


def print_skipped(result) -> None:
    """The lines not read, if any (empty documents; malformed lines with on_error = "skip"):
    shown even with --quiet (a run that silently lost lines would look clean)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if result.skipped:
        err.print(f"[yellow]NON-PRIVATE operator diagnostic (stderr only, never written to the "
                  f"output; do not publish): skipped {result.skipped:,} "
                  f"{result.skip_unit}{'' if result.skipped == 1 else 's'} (empty documents, "
                  f"and malformed {result.skip_unit}s with on_error = \"skip\"). First:[/]")
        for reason in result.skip_reasons:
            err.print(f"  {reason}", markup=False)
