"""Side-by-side evaluation of mechanisms on one corpus: a research harness for the data owner.

Runs every (mechanism, ε, Δ0) configuration ``repeats`` times on the same extracted item sets and
reports released sizes and run times. Columns marked NON-PRIVATE (union size, items held by ≥ k
users, the rank-frequency plot) are computed from the raw data without noise: they are for the data
owner's eyes only, written only by ``evaluate`` and never by ``dp-vocab run``.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .bounding import Input
from .errors import CorpusError, ParameterError
from .heldout import NON_PRIVATE, VocabularyUtility, ngram_coverage, split_users
from .itemsets import ItemSets, Vocabulary
from .output_dir import atomic_output_dir, check_output_dir, write_json

HOLDER_THRESHOLDS = (5, 20, 100)


@dataclass
class Evaluation:
    """Per-run records, per-configuration summary, and the non-private corpus facts."""

    runs: list[dict]
    summary: list[dict]
    non_private: dict
    released_example: dict = field(default_factory=dict)   # config → items of one run (plot)
    # NON-PRIVATE: users holding each item id, and the strings, for the rank-frequency plot
    holders: np.ndarray | None = field(default=None, repr=False)
    vocab: Vocabulary | None = field(default=None, repr=False)

    def table(self):
        """The released sizes; below them, when present, the NON-PRIVATE utility columns."""
        from rich.console import Group
        from rich.table import Table
        t = Table(title="dp-vocab evaluate: released size (mean ± sd over repeats)")
        for col in ("mechanism", "ε", "δ", "Δ0", "released", "time (s)"):
            t.add_column(col, justify="right" if col not in ("mechanism",) else "left")
        for row in self.summary:
            t.add_row(row["mechanism"], f"{row['epsilon']:g}", f"{row['delta']:g}",
                      str(row["max_items_per_user"]),
                      f"{row['released_mean']:.1f} ± {row['released_sd']:.1f}",
                      f"{row['seconds_mean']:.2f}")
        np_ = self.non_private
        caption = (f"[bold red]{NON_PRIVATE}[/] (data owner only, never release): union size "
                   f"{np_['union_size']:,}; " + ", ".join(
                       f"held by ≥ {k} users: {np_[f'held_by_at_least_{k}']:,}"
                       for k in HOLDER_THRESHOLDS))
        t.caption = caption
        # a column only where measured: coverage is NaN without held-out users
        extra = [c for c in UTILITY_COLUMNS if any(f"{c}_mean" in r and r[f"{c}_mean"] ==
                                                   r[f"{c}_mean"] for r in self.summary)]
        if not extra:
            return t
        u = Table(title=f"[bold red]{NON_PRIVATE}[/] utility (means; tok/w NP: a non-private "
                        f"vocabulary of the same size)")
        for col in ("mechanism", "ε", "Δ0", *(_SHORT[c] for c in extra)):
            u.add_column(col, justify="right" if col != "mechanism" else "left")
        for row in self.summary:
            u.add_row(row["mechanism"], f"{row['epsilon']:g}", str(row["max_items_per_user"]),
                      *(f"{row[f'{c}_mean']:.4g}" if f"{c}_mean" in row else "" for c in extra))
        return Group(t, u)


def _load(source, progress, sequences: bool = False):
    """(item sets or token sequences, the item extractor that made them)."""
    from .corpora import ArrowReader, CsvReader, JsonlReader, ParquetReader
    from .corpora.readers import format_of
    from .extraction import extract_itemsets, extract_sequences
    from .text.items import ItemExtractor
    from .text.tokenizers import RegexTokenizer
    if isinstance(source, ItemSets):
        if sequences:
            raise ParameterError("source", "ItemSets", "a corpus or recipe path",
                                 "n-gram mechanisms (dpne) need the token sequences")
        return source, ItemExtractor(RegexTokenizer())
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError("source", f"a {type(source).__name__}",
                             "a corpus path, a recipe (.cfg) or ItemSets",
                             "For a DataFrame: dp_vocab.itemsets_from_frame(df, user=..., "
                             "text=...) first.")
    path = Path(source)
    if path.suffix == ".cfg":
        from .recipes import load_recipe, resolve_sections
        cfg = load_recipe(path)
        objs = resolve_sections(cfg, ("corpus", "items"))
        reader, extractor = objs["corpus"], objs["items"]
    else:   # the reader the file's name calls for (JSON lines unless it says otherwise)
        read = {"csv": CsvReader, "parquet": ParquetReader,
                "arrow": ArrowReader}.get(format_of(path) or "jsonl", JsonlReader)
        reader, extractor = read(path), ItemExtractor(RegexTokenizer())
    extract = extract_sequences if sequences else extract_itemsets
    return extract(reader, extractor, on_progress=(lambda: progress(reader)) if progress
                   else None), extractor


PUBLIC_PARAMS = ("public_frequencies", "lang", "public_items", "public_bands", "public_fdr",
                 "public_cutoff")
# NON-PRIVATE per-run columns (dp_vocab.heldout), averaged in the summary
UTILITY_COLUMNS = ("true_items", "false_positives", "heldout_coverage", "tokens_per_word",
                   "tokens_per_word_nonprivate")
_SHORT = {"true_items": "true", "false_positives": "FP", "heldout_coverage": "cover",
          "tokens_per_word": "tok/w", "tokens_per_word_nonprivate": "tok/w NP"}


DEFAULT_MECHANISMS = ("weighted_gaussian", "policy_laplace", "policy_gaussian", "gw")


def recipe_mechanism(source) -> tuple[str, dict] | None:
    """A recipe's [mechanism]: (short name, its parameters but ε and δ), or None for a corpus."""
    if not isinstance(source, (str, os.PathLike)) or Path(source).suffix != ".cfg":
        return None
    from .recipes import load_recipe
    from .registry import mechanism_parameters, resolve_mechanism_name
    section = load_recipe(source)["mechanism"]
    name = resolve_mechanism_name(section["@mechanisms"]).split(".")[1]
    params = {k: v for k, v in section.items()
              if not k.startswith("@") and k not in ("epsilon", "delta")}
    if "max_items_per_user" not in params:   # the recipe's Δ0 is then its mechanism's own
        params["max_items_per_user"] = dict(mechanism_parameters(name))["max_items_per_user"]
    return name, params


def compared_mechanisms(recipe: tuple[str, dict] | None, mechanisms) -> list[str]:
    """The short names ``evaluate`` compares: ``mechanisms`` (registry names too), or, when
    None, ``DEFAULT_MECHANISMS`` and the recipe's own mechanism."""
    from .registry import resolve_mechanism_name
    if mechanisms is not None:
        return [resolve_mechanism_name(m).split(".")[1] for m in mechanisms]
    own = [recipe[0]] if recipe is not None and recipe[0] not in DEFAULT_MECHANISMS else []
    return list(DEFAULT_MECHANISMS) + own


def _with_recipe_public_params(recipe: tuple[str, dict] | None, mechanisms,
                               params: dict) -> dict:
    """A recipe's public inputs ([mechanism] public_frequencies, lang) go to every compared
    mechanism that takes them, unless given per mechanism."""
    if recipe is None:
        return params
    from .registry import mechanism_parameters
    public = {k: recipe[1][k] for k in PUBLIC_PARAMS if k in recipe[1]}
    out = {m: dict(p) for m, p in params.items()}
    for m in mechanisms:
        accepted = {name for name, _ in mechanism_parameters(m)}
        for k, v in public.items():
            if k in accepted:
                out.setdefault(m, {}).setdefault(k, v)
    return out


_SHARED: dict = {}


def _init_worker(itemsets: ItemSets, sequences, utility, extractor, held_sequences) -> None:
    _SHARED.update(itemsets=itemsets, sequences=sequences, utility=utility, extractor=extractor,
                   held_sequences=held_sequences)


def _run_one(config: dict) -> dict:
    from .registry import make_mechanism
    from .mechanisms import MECHANISMS
    seq = MECHANISMS[config["mechanism"]].input is Input.SEQUENCES
    itemsets = _SHARED["sequences" if seq else "itemsets"]
    params = {k: v for k, v in config.items() if k not in ("mechanism", "repeat")}
    # a public list is normalised by the extractor, as the recipe runner does
    mech = make_mechanism(config["mechanism"], **params).for_extractor(_SHARED["extractor"])
    t = time.perf_counter()
    rel = mech.release(itemsets)
    record = {**config, "released": len(rel.items), "seconds": time.perf_counter() - t}
    utility = _SHARED.get("utility")
    held_seq = _SHARED.get("held_sequences")
    if utility is not None and not seq:   # NON-PRIVATE columns
        record.update(utility.measure(rel.items, tokenizers=utility.heldout.n_users > 0
                                      and config["repeat"] == 0))
    elif seq and held_seq is not None and held_seq.n_users:
        record.update(ngram_coverage(rel.items, held_seq, getattr(mech, "max_n", 5)))
    return {**record, "_items": rel.items}


def evaluate(source, mechanisms: list[str] | None, epsilons: list[float], delta: float = 1e-5,
             repeats: int = 3, max_items_per_user: list[int] | None = None,
             mechanism_params: dict | None = None, jobs: int = 1,
             on_run: Callable[[dict], None] | None = None, progress=None,
             holdout: float = 0.0) -> Evaluation:
    """Run every configuration ``repeats`` times. ``source``: a JSONL corpus, a recipe (.cfg,
    its corpus and [items]) or ItemSets. ``mechanism_params``: extra parameters per mechanism.
    ``mechanisms`` None: ``DEFAULT_MECHANISMS`` and a recipe's own mechanism, which runs with
    the recipe's parameters; ``max_items_per_user`` None: the recipe's Δ0, else 100.

    Item-set runs get NON-PRIVATE columns: true items (held by some user the mechanism saw) and
    false positives. With ``holdout`` > 0 that share of users (a fixed hash split) is kept out of
    every run, and each run also reports the share of the held-out users' token occurrences its
    vocabulary covers and, for the first repeat, tokens per word of its WordPiece export next to a
    non-private one of the same size built from the training users' most frequent items."""
    from .privacy.params import check_delta, check_epsilon, check_positive_int
    recipe = recipe_mechanism(source)
    mechanisms = compared_mechanisms(recipe, mechanisms)
    if recipe is not None and recipe[0] in mechanisms:   # the recipe's own settings for it
        own = {k: v for k, v in recipe[1].items() if k != "max_items_per_user"}
        mechanism_params = {**(mechanism_params or {}),
                            recipe[0]: {**own, **(mechanism_params or {}).get(recipe[0], {})}}
    if max_items_per_user is None and recipe is not None:
        max_items_per_user = [recipe[1]["max_items_per_user"]]
    if not mechanisms:
        raise ParameterError("mechanisms", mechanisms, "at least one mechanism name")
    if not epsilons:
        raise ParameterError("epsilons", epsilons, "at least one ε value")
    for e in epsilons:
        check_epsilon(e, "epsilon")
    check_delta(delta, "delta")
    check_positive_int(repeats, "repeats")
    check_positive_int(jobs, "jobs")
    if not isinstance(holdout, (int, float)) or isinstance(holdout, bool) \
            or not 0.0 <= holdout < 1.0:
        raise ParameterError("holdout", holdout, "a share of users in [0, 1), e.g. 0.2")
    d0s = list(max_items_per_user or [100])
    for d0 in d0s:
        check_positive_int(d0, "max_items_per_user")
    mechanism_params = _with_recipe_public_params(recipe, mechanisms, mechanism_params or {})
    from .mechanisms import MECHANISMS
    itemsets, extractor = _load(source, progress)
    if not itemsets.n_pairs:
        # evaluate is the data owner's NON-PRIVATE harness: saying the corpus is empty is fine
        raise CorpusError("no item in the corpus (no documents, or every token dropped): "
                          "nothing to evaluate", path=None if isinstance(source, ItemSets)
                          else source)
    needs_seq = any(m in MECHANISMS and MECHANISMS[m].input is Input.SEQUENCES
                    for m in mechanisms)
    sequences = held_sequences = None
    train, heldout = split_users(itemsets, float(holdout))
    if holdout and not (train.n_pairs and heldout.n_pairs):
        # users whose every token was dropped count on neither side: nothing to train or score
        raise ParameterError("holdout", holdout, "a share that leaves users holding items on "
                             "both sides", "The corpus has too few users (with items) for "
                             "this split.")
    itemsets = train
    utility = VocabularyUtility(train, heldout, extractor.describe())
    if needs_seq:   # the same users held out of the n-gram mechanisms
        sequences, held_sequences = split_users(_load(source, progress, sequences=True)[0],
                                                float(holdout))
    configs = [{"mechanism": m, "epsilon": float(e), "delta": float(delta),
                "max_items_per_user": int(d0), **mechanism_params.get(m, {}), "repeat": r}
               for m in mechanisms for e in epsilons for d0 in d0s for r in range(repeats)]
    _init_worker(itemsets, sequences, utility, extractor, held_sequences)
    runs = []
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        # spawn, not fork: numba's OpenMP threads make fork unsafe
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                 initargs=(itemsets, sequences, utility, extractor,
                                           held_sequences)) as pool:
            for rec in pool.map(_run_one, configs):
                runs.append(rec)
                if on_run:
                    on_run(rec)
    else:
        for cfg in configs:
            rec = _run_one(cfg)
            runs.append(rec)
            if on_run:
                on_run(rec)
    examples: dict[tuple, list[str]] = {}
    for rec in runs:
        examples.setdefault((rec["mechanism"], rec["epsilon"], rec["max_items_per_user"]),
                            rec.pop("_items"))
        rec.pop("_items", None)
    summary = []
    for key in dict.fromkeys((r["mechanism"], r["epsilon"], r["max_items_per_user"]) for r in runs):
        rs = [r for r in runs if (r["mechanism"], r["epsilon"], r["max_items_per_user"]) == key]
        sizes = [r["released"] for r in rs]
        row = {"mechanism": key[0], "epsilon": key[1], "delta": float(delta),
               "max_items_per_user": key[2], "repeats": len(rs),
               "released_mean": statistics.fmean(sizes),
               "released_sd": statistics.stdev(sizes) if len(sizes) > 1 else 0.0,
               "seconds_mean": statistics.fmean(r["seconds"] for r in rs)}
        for col in UTILITY_COLUMNS:   # NON-PRIVATE
            vals = [r[col] for r in rs if col in r]
            if vals:
                row[f"{col}_mean"] = statistics.fmean(vals)
        row.update({k: statistics.fmean(r[k] for r in rs) for k in rs[0]   # NON-PRIVATE
                    if k.startswith(("coverage_n", "next_word"))})
        summary.append(row)
    holders = np.bincount(itemsets.items, minlength=len(itemsets.vocab))
    non_private = {"warning": f"{NON_PRIVATE}: computed from raw data without noise; for the "
                              f"data owner only, never publish",
                   "union_size": int((holders > 0).sum()),
                   **{f"held_by_at_least_{k}": int((holders >= k).sum())
                      for k in HOLDER_THRESHOLDS}}
    return Evaluation(runs=runs, summary=summary, non_private=non_private,
                      released_example=examples, holders=holders, vocab=itemsets.vocab)


# ---- files -------------------------------------------------------------------------------------

def _plots(ev: Evaluation) -> dict[str, bytes]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pngs = {}
    mechs = list(dict.fromkeys(s["mechanism"] for s in ev.summary))
    d0s = sorted({s["max_items_per_user"] for s in ev.summary})
    eps = sorted({s["epsilon"] for s in ev.summary})

    def save(fig, name):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        pngs[name] = buf.getvalue()

    def size_plot(x_key, fixed_key, fixed, xlabel, title, name):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for m in mechs:
            rows = sorted((r for r in ev.summary if r["mechanism"] == m and r[fixed_key] == fixed),
                          key=lambda r: r[x_key])
            ax.errorbar([r[x_key] for r in rows], [r["released_mean"] for r in rows],
                        yerr=[r["released_sd"] for r in rows], marker="o", capsize=3, label=m)
        xs = [r[x_key] for r in ev.summary]
        ys = [r["released_mean"] for r in ev.summary]
        if min(xs) > 0 and max(xs) / min(xs) >= 10:
            ax.set_xscale("log")
        if max(ys) / max(1, min(ys)) >= 10:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("released items (mean ± sd)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(title="mechanism")
        save(fig, name)

    d0, e0 = d0s[-1], max(eps)
    size_plot("epsilon", "max_items_per_user", d0, "ε (privacy budget)",
              f"Released vocabulary size vs ε (Δ0 = {d0}, δ = {ev.summary[0]['delta']:g})",
              "size_vs_epsilon.png")
    size_plot("max_items_per_user", "epsilon", e0, "Δ0 (max items per user)",
              f"Released vocabulary size vs Δ0 (ε = {e0:g})", "size_vs_max_items.png")

    holders = ev.holders if ev.holders is not None else np.zeros(0)
    order = np.argsort(-holders, kind="stable")
    order = order[holders[order] > 0]
    ranks = np.arange(1, order.size + 1)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(ranks, holders[order], color="0.4", lw=1.5, label="all items (rank by #users)")
    key = next(iter(k for k in ev.released_example if k[1] == e0), None)
    if key is not None:
        released = set(ev.released_example[key])
        strings = ev.vocab.strings if ev.vocab is not None else []
        mask = np.array([strings[int(i)] in released for i in order], dtype=np.bool_)
        ax.scatter(ranks[mask], holders[order][mask], s=6, color="tab:red",
                   label=f"released by {key[0]} (ε={key[1]:g}, one run)")
    ax.set_xlabel("rank")
    ax.set_ylabel("number of users holding the item")
    ax.set_title(f"{NON_PRIVATE}: rank-frequency curve of the corpus")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    save(fig, "rank_frequency_NON_PRIVATE.png")
    return pngs


def _html(ev: Evaluation, pngs: dict[str, bytes]) -> str:
    extra = [c for c in UTILITY_COLUMNS if any(f"{c}_mean" in r for r in ev.summary)]
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
            s["mechanism"], f"{s['epsilon']:g}", f"{s['delta']:g}", s["max_items_per_user"],
            f"{s['released_mean']:.1f} ± {s['released_sd']:.1f}", f"{s['seconds_mean']:.2f}",
            *(f"{s[f'{c}_mean']:.3g}" if f"{c}_mean" in s else "" for c in extra)))
        + "</tr>" for s in ev.summary)
    heads = "".join(f'<th class="npc">{html.escape(c.replace("_", " "))} ({NON_PRIVATE})</th>'
                    for c in extra)
    npv = ev.non_private
    np_rows = "".join(f"<tr><td>{html.escape(k.replace('_', ' '))}</td><td>{v:,}</td></tr>"
                      for k, v in npv.items() if k != "warning")
    imgs = "".join(
        f'<figure><img alt="{html.escape(n)}" src="data:image/png;base64,'
        f'{base64.b64encode(b).decode()}"><figcaption>{html.escape(n)}</figcaption></figure>'
        for n, b in pngs.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dp-vocab evaluation</title>
<style>body{{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:right}}
.npc{{color:#c00}}.np{{border:2px solid #c00;padding:0.5em 1em;background:#fff4f4}}img{{max-width:100%}}</style>
</head><body>
<h1>dp-vocab evaluation</h1>
<p>Each configuration was run {ev.summary[0]['repeats']} times on the same extracted item sets.</p>
<table><tr><th>mechanism</th><th>ε</th><th>δ</th><th>Δ0</th><th>released (mean ± sd)</th>
<th>time (s)</th>{heads}</tr>{rows}</table>
<div class="np"><h2>{NON_PRIVATE}</h2><p>{html.escape(npv['warning'])}</p>
<table>{np_rows}</table></div>
{imgs}
</body></html>
"""


def write_report(ev: Evaluation, output, force: bool = False, protect=()) -> list[str]:
    """results.csv, results.json, PNG plots and report.html, atomically."""
    check_output_dir(output, force, protect)
    pngs = _plots(ev)
    with atomic_output_dir(output, force, protect) as tmp:
        with open(tmp / "results.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(
                k for row in ev.summary for k in row)), restval="")
            w.writeheader()
            w.writerows(ev.summary)
        write_json(tmp / "results.json", {"summary": ev.summary, "runs": ev.runs,
                                           "non_private": ev.non_private})
        for name, data in pngs.items():
            (tmp / name).write_bytes(data)
        (tmp / "report.html").write_text(_html(ev, pngs), encoding="utf-8")
    return ["results.csv", "results.json", *pngs, "report.html"]


__all__ = ["Evaluation", "evaluate", "write_report"]
