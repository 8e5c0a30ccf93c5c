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
import math
import os
import re
import statistics
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from ..bounding import Input
from ..errors import CorpusError, ParameterError
from .heldout import (NON_PRIVATE, VocabularyUtility, ngram_coverage, nonprivate_same_size,
                      split_users)
from ..data.itemsets import ItemSets, Vocabulary
from ..export.output_dir import atomic_output_dir, check_output_dir, write_json
from ..ingest.text.parallel import main_reimport_is_safe
from ..version import __version__

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
    # the run's context for the report's header: source, users (NON-PRIVATE), hold-out share,
    # δ, repeats, dp-vocab's version, date
    context: dict = field(default_factory=dict)
    # NON-PRIVATE: the recipe's exported tokenizer next to the non-private one, per ε
    # (``compare_tokenizers``; a recipe with an hf_tokenizer export and a hold-out share)
    tokenizers: list = field(default_factory=list)

    def table(self):
        """The released sizes; below them, when present, the NON-PRIVATE utility columns: a
        rich renderable (``rich.print(ev.table())``; ``print`` shows only its name)."""
        from rich.console import Group
        from rich.table import Table
        spread = any(row["repeats"] > 1 for row in self.summary)
        t = Table(title="dp-vocab evaluate: released size"
                        + (" (mean ± sd over repeats)" if spread else ""))
        # a mechanism name stays whole on its line; a narrow console wraps the other columns'
        # headers, then folds their numbers (never cuts a name to "policy_gaussian_pub…")
        for col in ("mechanism", "ε", "δ", "Δ0", "released", "time (s)"):
            t.add_column(col, justify="right" if col not in ("mechanism",) else "left",
                         overflow="fold", no_wrap=col == "mechanism")
        for row in self.summary:
            t.add_row(row["mechanism"], f"{row['epsilon']:g}", f"{row['delta']:g}",
                      f"{row['max_items_per_user']:,}", _released(row),
                      format_value("seconds", row["seconds_mean"]))
        np_ = self.non_private
        caption = (f"[bold red]{NON_PRIVATE}[/] (data owner only, never release): union size "
                   f"{np_['union_size']:,}; " + ", ".join(
                       f"held by ≥ {k} users: {np_[f'held_by_at_least_{k}']:,}"
                       for k in HOLDER_THRESHOLDS))
        t.caption = caption
        # a column only where measured: coverage is NaN without held-out users
        extra = [c for c in UTILITY_COLUMNS if any(f"{c}_mean" in r and r[f"{c}_mean"] ==
                                                   r[f"{c}_mean"] for r in self.summary)]
        words = [c for c in ("next_word_suggested", "next_word_suggested_nonprivate")
                 if any(c in r for r in self.summary)]   # n-gram mechanisms on held-out users
        parts = [t]
        if self.tokenizers:
            k = Table(title=f"[bold red]{NON_PRIVATE}[/] the recipe's tokenizer on held-out users "
                            f"(tokens per word; non-private: same pipeline, model and size)")
            for col in TOKENIZER_HEADS:
                k.add_column(col, justify="right", overflow="fold")
            for r in tokenizer_rows(self):
                k.add_row(*r)
            parts.append(k)
        if not extra and not words:
            return Group(*parts) if len(parts) > 1 else t
        legend = ("; tok/w NP: a non-private vocabulary of the same size"
                  if "tokens_per_word_nonprivate" in extra else "")
        if "tokens_per_word" in extra and spread:   # a tokenizer is trained on one release
            legend += "; tok/w: the first repeat's release only"
        if "next_word_suggested_nonprivate" in words:
            legend += "; next word NP: the most held n-grams, as many per level as released"
        u = Table(title=f"[bold red]{NON_PRIVATE}[/] utility (means{legend})")
        for col in ("mechanism", "ε", "Δ0", *(_SHORT[c] for c in extra + words)):
            u.add_column(col, justify="right" if col != "mechanism" else "left",
                         overflow="fold", no_wrap=col == "mechanism")
        for row in self.summary:
            u.add_row(row["mechanism"], f"{row['epsilon']:g}", f"{row['max_items_per_user']:,}",
                      *(format_value(c, row[f"{c}_mean"]) if f"{c}_mean" in row else ""
                        for c in extra),
                      *(format_value(c, row[c]) if c in row else "" for c in words))
        return Group(*parts, u)


def _load(source, progress, sequences: bool = False, overrides: dict | None = None):
    """(item sets or token sequences, the item extractor that made them, what one user is in
    the corpus's terms (the reader's record; None for item sets)); ``overrides``
    change a recipe's values (``recipes.load_recipe``), or a corpus file's reader settings
    (``corpus_reader``)."""
    from ..ingest.text.items import ItemExtractor
    from ..ingest.text.tokenizers import RegexTokenizer
    if isinstance(source, ItemSets):
        if sequences:
            raise ParameterError("source", "ItemSets", "a corpus or recipe path",
                                 "n-gram mechanisms (dpne) need the token sequences")
        return source, ItemExtractor(RegexTokenizer()), None
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError("source", f"a {type(source).__name__}",
                             "a corpus path, a recipe (.cfg) or ItemSets",
                             "For a DataFrame: dp_vocab.itemsets_from_frame(df, user=..., "
                             "text=...) first.")
    path = _recipe_or_path(source)
    if path.suffix == ".cfg":
        from ..recipes import load_recipe, resolve_sections
        cfg = load_recipe(path, overrides)
        objs = resolve_sections(cfg, ("corpus", "items"))
        reader, extractor = objs["corpus"], objs["items"]
    else:
        reader, extractor = corpus_reader(path, overrides), ItemExtractor(RegexTokenizer())
    # a run's own loading: a corpus that gives no document is the same error here
    from ..backends.local import LocalBackend
    describe = getattr(reader, "describe", None)   # a registered reader may have none
    one_user = describe().get("user") if describe is not None else None
    return LocalBackend().load(reader, extractor, sequences, progress), extractor, one_user


def corpus_reader(path: Path, overrides: dict | None = None):
    """A corpus file's reader: the one its name calls for (JSON lines unless it says
    otherwise), with ``corpus.*`` overrides as a recipe's [corpus] takes them
    (``{"corpus.user_field": "author"}``, ``{"corpus.@readers": "dp_vocab.text_folder.v1"}``)."""
    from confection import Config
    from ..ingest.corpora.readers import format_of
    from ..recipes import resolve_sections
    _check_corpus_overrides(overrides or {})
    settings = {k.removeprefix("corpus."): v for k, v in (overrides or {}).items()}
    name = settings.pop("@readers", f"dp_vocab.{format_of(path) or 'jsonl'}.v1")
    return resolve_sections(Config({"corpus": {"@readers": name, "path": str(path),
                                                **settings}}), ("corpus",))["corpus"]


def _check_corpus_overrides(overrides: dict) -> None:
    """A corpus file takes its reader's settings; ε, δ and Δ0 have options of their own."""
    _check_used_overrides({k: v for k, v in overrides.items() if not k.startswith("corpus.")},
                          False, None, corpus_file=True)
    other = sorted(k for k in overrides if not k.startswith("corpus.") or k == "corpus.path")
    if other:
        raise ParameterError("overrides", other, "only its reader's settings for a corpus file "
                             "(corpus.KEY, e.g. corpus.user_field; the file is the corpus)",
                             "For other values, evaluate a recipe (a .cfg file or a shipped "
                             "recipe's name) whose [paths] corpus is the file.")


PUBLIC_PARAMS = ("public_frequencies", "lang", "public_items", "public_bands", "public_fdr",
                 "public_cutoff")
# NON-PRIVATE per-run columns (dp_vocab.research.heldout), averaged in the summary
UTILITY_COLUMNS = ("true_items", "false_positives", "heldout_coverage", "tokens_per_word",
                   "tokens_per_word_nonprivate")
_SHORT = {"true_items": "true", "false_positives": "FP", "heldout_coverage": "cover",
          "tokens_per_word": "tok/w", "tokens_per_word_nonprivate": "tok/w NP",
          "next_word_suggested": "next word", "next_word_suggested_nonprivate": "next word NP"}


DEFAULT_MECHANISMS = ("weighted_gaussian", "policy_laplace", "policy_gaussian", "gw")


def _recipe_or_path(source) -> Path:
    """A corpus or recipe path; a shipped recipe's name (``quickstart``) is its file."""
    from ..recipes.shipped import find_recipe
    return Path(find_recipe(source))


def output_guards(source, overrides: dict | None = None) -> tuple[list, list]:
    """What evaluate's output must not contain (``source``, and a recipe's corpus) and the
    folders it must not be inside (those a recipe's reader searches), as a run checks them."""
    if isinstance(source, (str, os.PathLike)) and _recipe_or_path(source).suffix == ".cfg":
        from ..recipes import output_guards as recipe_guards
        protect, below = recipe_guards(_recipe_or_path(source), overrides)
        return [source, *protect], below
    folder = (overrides or {}).get("corpus.@readers") == "dp_vocab.text_folder.v1"
    return [source], [source] if folder else []


def recipe_mechanism(source, overrides: dict | None = None) -> tuple[str, dict] | None:
    """A recipe's [mechanism] (with ``overrides``, ``{"section.key": value}``): (short name, its
    parameters but ε and δ), or None for a corpus, whose ``overrides`` are refused."""
    if not isinstance(source, (str, os.PathLike)):
        if overrides:
            raise ParameterError("overrides", sorted(overrides), "none for item sets (they "
                                 "change a recipe's values, or a corpus file's reader)")
        return None
    if _recipe_or_path(source).suffix != ".cfg":
        _check_corpus_overrides(overrides or {})
        return None
    from ..recipes import load_recipe, resolve_sections
    from ..registry import mechanism_parameters, shortest_name
    cfg = load_recipe(source, overrides)
    resolve_sections(cfg, ("mechanism",))   # checked as a run checks it, also when not compared
    section = cfg["mechanism"]
    name = shortest_name(section["@mechanisms"])
    params = {k: v for k, v in section.items()
              if not k.startswith("@") and k not in ("epsilon", "delta")}
    if "max_items_per_user" not in params:   # the recipe's Δ0 is then its mechanism's own
        params["max_items_per_user"] = dict(mechanism_parameters(name))["max_items_per_user"]
    return name, params


def compared_mechanisms(recipe: tuple[str, dict] | None, mechanisms) -> list[str]:
    """The short names ``evaluate`` compares: ``mechanisms`` (registry names too), or, when
    None, ``DEFAULT_MECHANISMS`` and the recipe's own mechanism."""
    from ..registry import shortest_name
    if mechanisms is not None:
        return [shortest_name(m) for m in mechanisms]
    own = [recipe[0]] if recipe is not None and recipe[0] not in DEFAULT_MECHANISMS else []
    return list(DEFAULT_MECHANISMS) + own


def _with_recipe_public_params(recipe: tuple[str, dict] | None, mechanisms,
                               params: dict) -> dict:
    """A recipe's public inputs ([mechanism] public_frequencies, lang) go to every compared
    mechanism that takes them, unless given per mechanism."""
    if recipe is None:
        return params
    from ..registry import mechanism_parameters
    public = {k: recipe[1][k] for k in PUBLIC_PARAMS if k in recipe[1]}
    out = {m: dict(p) for m, p in params.items()}
    for m in mechanisms:
        accepted = {name for name, _ in mechanism_parameters(m)}
        for k, v in public.items():
            if k in accepted:
                out.setdefault(m, {}).setdefault(k, v)
    return out


_SHARED: dict = {}
# mechanisms already run once in this process: numba compiles a kernel on its first call, and
# that compile is kept out of the timings by one untimed warm-up run
_WARM: set = set()


def _init_worker(itemsets: ItemSets, sequences, utility, extractor, held_sequences) -> None:
    _SHARED.update(itemsets=itemsets, sequences=sequences, utility=utility, extractor=extractor,
                   held_sequences=held_sequences)


def _run_one(config: dict) -> dict:
    from ..registry import make_mechanism, mechanism_class
    seq = mechanism_class(config["mechanism"]).input is Input.SEQUENCES
    itemsets = _SHARED["sequences" if seq else "itemsets"]
    params = {k: v for k, v in config.items() if k not in ("mechanism", "repeat")}
    # a public list is normalised by the extractor, as the recipe runner does
    mech = make_mechanism(config["mechanism"], **params).for_extractor(_SHARED["extractor"])
    if config["mechanism"] not in _WARM:
        mech.release(itemsets)
        _WARM.add(config["mechanism"])
    t = time.perf_counter()
    rel = mech.release(itemsets)
    record = {**config, "released": len(rel.items), "seconds": time.perf_counter() - t}
    utility = _SHARED.get("utility")
    held_seq = _SHARED.get("held_sequences")
    if utility is not None and not seq:   # NON-PRIVATE columns
        record.update(utility.measure(rel.items, tokenizers=utility.heldout.n_users > 0
                                      and config["repeat"] == 0))
    elif seq and held_seq is not None and held_seq.n_users:
        max_n = getattr(mech, "max_n", 5)
        record.update(ngram_coverage(rel.items, held_seq, max_n))
        # the same number of n-grams per level, the most held in training, without privacy
        sizes = [0] * max_n
        for g in rel.items:
            sizes[len(g.split(itemsets.joiner)) - 1] += 1
        same = nonprivate_same_size(itemsets, sizes)
        record["next_word_suggested_nonprivate"] = ngram_coverage(
            same, held_seq, max_n)["next_word_suggested"]
    return {**record, "_items": rel.items}


def _check_list(value, name: str, example: str) -> None:
    """A list (or tuple) argument given as one value is named, with the fix."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        kind = "a string" if isinstance(value, str) else f"a single {type(value).__name__}"
        raise ParameterError(name, value, f"a list, e.g. {example}",
                             f"That is {kind}; wrap one value in a list: [{value!r}].")


def evaluate(source, mechanisms: list[str] | None, epsilons: list[float], delta: float = 1e-5,
             repeats: int = 3, max_items_per_user: list[int] | None = None,
             mechanism_params: dict | None = None, jobs: int = 1,
             on_run: Callable[[dict], None] | None = None, progress=None,
             holdout: float = 0.0, on_step: Callable[[str], None] | None = None,
             overrides: dict | None = None) -> Evaluation:
    """Compare mechanisms side by side on one corpus: every (mechanism, ε, Δ0) configuration
    runs ``repeats`` times on the same extracted item sets. A research harness for the data
    owner: its NON-PRIVATE columns are computed from raw data and must not be published.

    ``evaluate("corpus.jsonl.gz", ["policy_gaussian", "gw"], [1, 3], holdout=0.2)``

    Parameters
    ----------
    source : str, PathLike or ItemSets
        A corpus file (JSONL, or CSV/Parquet/Arrow by its name), a recipe (a ``.cfg`` file or a
        shipped recipe's name such as ``"quickstart"``: its corpus and ``[items]``), or
        ``ItemSets`` (for a DataFrame: ``itemsets_from_frame`` first).
    mechanisms : list of str or None
        Mechanism names (``dp-vocab mechanisms`` lists them). None: weighted_gaussian,
        policy_laplace, policy_gaussian, gw, and a recipe's own mechanism with its parameters.
    epsilons : list of float
        The ε values, e.g. ``[1, 3, 8]`` (a list even for one value).
    delta : float
        δ of every configuration.
    repeats : int
        Runs per configuration (mean and standard deviation are reported).
    max_items_per_user : list of int or None
        The Δ0 values; None: the recipe's Δ0, else 100.
    mechanism_params : dict or None
        Extra parameters per mechanism, ``{"gw_kt": {"public_frequencies": "wordfreq:en"}}``.
    jobs : int
        Processes running the configurations in parallel.
    on_run : callable or None
        Called with each run's record as it finishes (progress).
    progress : callable or None
        Called with the reader while the corpus is read (progress over input bytes).
    holdout : float
        A share of users in [0, 1) kept out of every run (a fixed hash of the user id); each
        run then also reports the share of the held-out users' token occurrences its vocabulary
        covers and, for the first repeat, tokens per word of its WordPiece export next to a
        non-private vocabulary of the same size (the training users' most frequent items).
    on_step : callable or None
        Called with a line saying what starts in the tokenizer comparison (a recipe exporting
        a Hugging Face tokenizer, with ``holdout``): the recipe at each ε, the non-private
        trainer (minutes each on a large corpus).
    overrides : dict or None
        A recipe's values to replace, keyed by ``"section.key"`` as ``run_recipe`` takes them
        (``{"paths.corpus": "my.jsonl.gz", "corpus.text_field": "body"}``); only for a recipe.

    Returns
    -------
    Evaluation
        ``.runs`` (one record per run: configuration, released size, seconds, NON-PRIVATE true
        items and false positives, and the held-out columns), ``.summary`` (one row per
        configuration: means and standard deviations), ``.non_private`` (union size, items
        held by at least k users), ``.table()`` (a rich table);
        ``dp_vocab.research.evaluation.write_report`` writes CSV, JSON, plots and report.html.

    Raises
    ------
    ParameterError
        A list given as a single value, an unknown mechanism or a parameter out of range.
    RecipeError
        The recipe, or an override naming no section of it.
    CorpusError
        The corpus cannot be read, gives no document, or holds no item.
    """
    from ..privacy.params import check_delta, check_epsilon, check_positive_int
    _check_list(epsilons, "epsilons", "[1, 3]")
    if mechanisms is not None:
        _check_list(mechanisms, "mechanisms", '["policy_gaussian", "gw"]')
    if max_items_per_user is not None:
        _check_list(max_items_per_user, "max_items_per_user", "[10, 100]")
    recipe = recipe_mechanism(source, overrides)
    tokenizer_runs = bool(holdout) and _exports_hf_tokenizer(source, overrides)
    _check_used_overrides(overrides or {}, tokenizer_runs, max_items_per_user)
    if tokenizer_runs:   # the recipe's runs, checked before any data is read
        import tempfile
        from ..recipes import plan_run
        with tempfile.TemporaryDirectory(prefix="dp-vocab-check-") as tmp:
            plan_run(_recipe_or_path(source), Path(tmp) / "planned", overrides)
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
    from ..registry import mechanism_class
    itemsets, extractor, one_user = _load(source, progress, overrides=overrides)
    if not itemsets.n_pairs:
        # evaluate is the data owner's NON-PRIVATE harness: saying the corpus is empty is fine
        raise CorpusError("no item in the corpus (no user holds one): "
                          "nothing to evaluate", path=None if isinstance(source, ItemSets)
                          else source)
    needs_seq = any(mechanism_class(m).input is Input.SEQUENCES for m in mechanisms)
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
        sequences, held_sequences = split_users(
            _load(source, progress, sequences=True, overrides=overrides)[0], float(holdout))
    configs = [{"mechanism": m, "epsilon": float(e), "delta": float(delta),
                "max_items_per_user": int(d0), **mechanism_params.get(m, {}), "repeat": r}
               for m in mechanisms for e in epsilons for d0 in d0s for r in range(repeats)]
    _init_worker(itemsets, sequences, utility, extractor, held_sequences)
    runs = []
    if jobs > 1 and not main_reimport_is_safe():
        warnings.warn(f"evaluate runs on one core, not {jobs}: this script starts it from its top "
                      "level. Put that code under `if __name__ == \"__main__\":` (worker "
                      "processes import the script again).", stacklevel=2)
        jobs = 1
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
    context = {"source": _source_name(source, overrides), "one_user": one_user,
               "holdout": float(holdout),
               "users_NON_PRIVATE": int(train.n_users + heldout.n_users),
               "heldout_users_NON_PRIVATE": int(heldout.n_users), "delta": float(delta),
               "repeats": int(repeats), "dp_vocab_version": __version__,
               "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    tokenizers = compare_tokenizers(_recipe_or_path(source), epsilons, float(holdout),
                                    overrides, on_step=on_step) if tokenizer_runs else []
    return Evaluation(runs=runs, summary=summary, non_private=non_private,
                      released_example=examples, holders=holders, vocab=itemsets.vocab,
                      context=context, tokenizers=tokenizers)


# what evaluate reads of a recipe; --epsilon and --delta take the place of ε and δ
_EVALUATED_SECTIONS = ("paths", "corpus", "items", "mechanism")


def _check_used_overrides(overrides: dict, tokenizer_runs: bool, max_items_per_user,
                          corpus_file: bool = False) -> None:
    """Refuse overrides evaluate would not use, so the report never lists an ignored one: it
    reads [paths], [corpus], [items] and [mechanism] (but ε and δ), and the recipe's runs with
    ``--holdout`` read every section but ``budget.epsilon``. On a corpus file only ε, δ and
    Δ0 are checked here (its own check refuses the rest)."""
    for key in overrides:
        section, _, name = key.partition(".")
        if key == "budget.epsilon" or (section == "mechanism" and name in ("epsilon", "delta")):
            fix = "Set ε with --epsilon (epsilons=) and δ with --delta (delta=)."
        elif key == "mechanism.max_items_per_user" and max_items_per_user is not None:
            fix = "Give Δ0 once: --max-items-per-user (max_items_per_user=) sets it here."
        elif key == "mechanism.max_items_per_user" and corpus_file:
            fix = "Set Δ0 with --max-items-per-user (max_items_per_user=)."
        elif corpus_file:
            continue
        elif section in _EVALUATED_SECTIONS or tokenizer_runs:
            continue
        else:
            fix = ("Without --holdout on a recipe that exports a Hugging Face tokenizer, "
                   "evaluate reads only [paths], [corpus], [items] and [mechanism].")
        raise ParameterError(f"--{key}", overrides[key], "an override that evaluate uses", fix)


def _exports_hf_tokenizer(source, overrides: dict | None = None) -> bool:
    """Whether ``source`` (with ``overrides``) is a recipe with a dp_vocab.hf_tokenizer.v1
    export."""
    if isinstance(source, ItemSets):
        return False
    path = _recipe_or_path(source)
    if path.suffix != ".cfg":
        return False
    from ..recipes import load_recipe
    export = load_recipe(path, overrides).get("export") or {}
    parts = [export] if "@exporters" in export else list(export.values())
    return any(isinstance(p, dict) and p.get("@exporters") == "dp_vocab.hf_tokenizer.v1"
               for p in parts)


def compare_tokenizers(recipe, epsilons, holdout: float = 0.2, overrides=None,
                       on_step: Callable[[str], None] | None = None) -> list[dict]:
    """NON-PRIVATE (data owner only): the recipe's Hugging Face tokenizer, as its users judge
    it. Users are split by ``heldout.is_held_out``; for each ε the recipe runs on the training
    users (``budget.epsilon`` = ε) and its exported tokenizer is scored on the held-out users'
    text next to the non-private tokenizer of the same pipeline and model at the same size
    (``heldout.nonprivate_tokenizer``): tokens per word and unknown tokens per word
    (``heldout.tokenizer_scores``). One row per ε. ``on_step`` is called with a line saying
    what starts (the recipe at an ε, the non-private trainer: minutes each on a large corpus)."""
    step = on_step or (lambda message: None)
    import dataclasses
    import tempfile
    import polars as pl
    from tokenizers import Tokenizer
    from ..ingest.corpora import FrameReader
    from ..export.hf import HFTokenizerExporter
    from .heldout import BaselineFailed, is_held_out, nonprivate_tokenizer, tokenizer_scores
    from ..recipes import execute, plan_run, report, write
    overrides = dict(overrides or {})
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="dp-vocab-tokenizers-") as tmp:
        plan = plan_run(recipe, Path(tmp) / "planned", overrides)
        if not any(isinstance(e, HFTokenizerExporter) for e in plan.exporters):
            raise ParameterError("recipe [export]", "no dp_vocab.hf_tokenizer.v1 export",
                                 "a recipe that exports a Hugging Face tokenizer")
        users, texts, held = [], [], []
        for user, text in plan.reader:
            if is_held_out(user, holdout):
                held.append(text)
            else:
                users.append(user)
                texts.append(text)
        if not (texts and held):
            raise ParameterError("holdout", holdout, "a share that leaves text on both sides",
                                 "The corpus has too few users for this split.")
        frame = pl.DataFrame({"user": users, "text": texts}, strict=False)
        baselines: dict[int, dict] = {}
        for eps in epsilons:
            out = Path(tmp) / f"run-{len(rows)}"
            plan = plan_run(recipe, out, {**overrides, "budget.epsilon": float(eps)})
            plan = dataclasses.replace(plan, reader=FrameReader(frame))
            step(f"tokenizers: the recipe at ε = {eps:g} on the training users")
            release, backend, _ = execute(plan)
            write(plan, release, report(plan, release, backend))
            private = Tokenizer.from_file(str(out / "hf" / "tokenizer.json"))
            size = private.get_vocab_size()
            if size not in baselines:
                step(f"tokenizers: training the non-private tokenizer of {size:,} tokens "
                     f"(tokenizers' own trainer; a Unigram one can take many minutes)")
                try:
                    baselines[size] = tokenizer_scores(
                        nonprivate_tokenizer(private, texts, size), held)
                except BaselineFailed as e:
                    warnings.warn(f"{e}: its columns say n/a", stacklevel=2)
                    baselines[size] = {"tokens_per_word": None, "unknown_rate": None}
            scores = tokenizer_scores(private, held)
            rows.append({"epsilon": float(eps), "size": size,
                         "tokens_per_word": scores["tokens_per_word"],
                         "unknown_rate": scores["unknown_rate"],
                         "tokens_per_word_nonprivate": baselines[size]["tokens_per_word"],
                         "unknown_rate_nonprivate": baselines[size]["unknown_rate"]})
    return rows


def _source_name(source, overrides: dict | None = None) -> str:
    """What was evaluated, for the report's header (a path as given, or the recipe's name and
    the keys it was overridden at)."""
    if isinstance(source, ItemSets):
        return "item sets given from Python"
    path = _recipe_or_path(source)
    if path.suffix == ".cfg":
        from ..ingest.corpora.bundled import PRESETS
        name = f"shipped recipe {path.stem}" if path.parent == PRESETS else f"recipe {source}"
        if overrides:
            name += " with overrides " + ", ".join(overrides)
        from ..recipes import load_recipe
        corpus = load_recipe(path, overrides)["corpus"].get("path")
        return f"{name} (corpus {corpus})" if corpus else name
    return str(source)


# ---- files -------------------------------------------------------------------------------------

def _example_key(ev: Evaluation, epsilon):
    """The configuration whose release the rank-frequency plot marks: at ``epsilon``, the one
    that released the most items (how far down the curve the compared mechanisms reach)."""
    keys = [k for k in ev.released_example if k[1] == epsilon]
    return max(keys, key=lambda k: len(ev.released_example[k]), default=None)


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
        # beside the axes, never over a line
        ax.legend(title="mechanism", loc="center left", bbox_to_anchor=(1.02, 0.5))
        save(fig, name)

    d0, e0 = d0s[-1], max(eps)
    # a size plot needs two values on its x axis; one value is already the table's row
    if len(eps) > 1:
        size_plot("epsilon", "max_items_per_user", d0, "ε (privacy budget)",
                  f"Released vocabulary size vs ε (Δ0 = {d0:,}, δ = {ev.summary[0]['delta']:g})",
                  "size_vs_epsilon.png")
    if len(d0s) > 1:
        size_plot("max_items_per_user", "epsilon", e0, "Δ0 (max items per user)",
                  f"Released vocabulary size vs Δ0 (ε = {e0:g})", "size_vs_max_items.png")

    holders = ev.holders if ev.holders is not None else np.zeros(0)
    order = np.argsort(-holders, kind="stable")
    order = order[holders[order] > 0]
    ranks = np.arange(1, order.size + 1)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(ranks, holders[order], color="0.4", lw=1.5, label="all items (rank by #users)")
    key = _example_key(ev, e0)
    if key is not None:
        released = set(ev.released_example[key])
        strings = ev.vocab.strings if ev.vocab is not None else []
        mask = np.array([strings[int(i)] in released for i in order], dtype=np.bool_)
        ax.scatter(ranks[mask], holders[order][mask], s=6, color="tab:red",
                   label=f"released by {key[0]} (ε={key[1]:g}, Δ0={key[2]:,}, one run)")
    ax.set_xlabel("rank")
    ax.set_ylabel("number of users holding the item")
    ax.set_title(f"{NON_PRIVATE}: rank-frequency curve of the corpus")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    save(fig, "rank_frequency_NON_PRIVATE.png")
    return pngs


# What each column means, shown under the report's table (NON-PRIVATE ones are marked there)
COLUMN_HELP = {
    "mechanism": "the mechanism compared (`dp-vocab mechanisms` lists them).",
    "ε": "the privacy-loss bound of every run: smaller is more private.",
    "δ": "the probability with which the ε bound may fail.",
    "Δ0": "the per-user cap: a user contributes at most this many items.",
    "released": "items in the released vocabulary (a differentially private output); with "
                "several repeats, mean ± standard deviation over them.",
    "time (s)": "seconds per release, mean over the repeats: the mechanism on items already "
                "extracted (reading and tokenizing not included), timed after one untimed "
                "warm-up run per mechanism so that compiling the numba kernels is not counted.",
    "true items": "released items that some user in the runs holds (mean).",
    "false positives": "released items that no user in the runs holds, e.g. from a public "
                       "word list (mean).",
    "held-out coverage": "share of the held-out users' token occurrences that are released "
                         "items (1 − missing mass; higher is better).",
    "tokens per word": "tokens per held-out word under a BERT-style WordPiece tokenizer built "
                       "from the release (first repeat; lower is better, 1.000 is every word "
                       "whole).",
    "tokens per word, non-private": "the same for a non-private vocabulary of the same size: "
                                    "the most frequent items of the users in the runs.",
    "n-gram coverage (n = k)": "share of the held-out users' n-gram occurrences of length k "
                               "that were released.",
    "next word suggested": "share of held-out words (after the first of a text) that a released "
                           "n-gram suggests from the words before it.",
    "next word suggested, non-private": "the same for a non-private n-gram set of the same size "
                                        "per level: the n-grams held by the most users in the "
                                        "runs (ties by occurrences).",
}
_HEADS = {"true_items": "true items", "false_positives": "false positives",
          "heldout_coverage": "held-out coverage", "tokens_per_word": "tokens per word",
          "tokens_per_word_nonprivate": "tokens per word, non-private",
          "next_word_suggested": "next word suggested",
          "next_word_suggested_nonprivate": "next word suggested, non-private"}


def format_value(column: str, value) -> str:
    """One format per kind of column, the same in the console table and the report: counts
    with thousands separators (means of counts to one decimal), shares as percentages, tokens
    per word with 3 decimals."""
    if value is None or value != value:   # NaN: not measured
        return "–"
    if column == "heldout_coverage" or column.startswith(("coverage_n", "next_word")):
        return f"{100 * value:.1f}%"
    if column.startswith("tokens_per_word"):
        return f"{value:.3f}"
    if column == "seconds":
        return f"{value:.2f}"
    # a count, or a mean of counts: a whole one without the ".0"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _np_label(key: str) -> str:
    """non_private's keys in words: union_size, held_by_at_least_K."""
    if key == "union_size":
        return "distinct items in the corpus (union size)"
    if key.startswith("held_by_at_least_"):
        return f"items held by at least {key.rsplit('_', 1)[1]} users"
    return key.replace("_", " ")


def _released(row: dict) -> str:
    if row["repeats"] == 1:   # no spread to show
        return format_value("released", row["released_mean"])
    return f"{row['released_mean']:,.1f} ± {row['released_sd']:,.1f}"


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _head(column: str) -> str:
    if column.startswith("coverage_n"):
        return f"n-gram coverage (n = {column[len('coverage_n'):]})"
    return _HEADS.get(column, column.replace("_", " "))


def _measured_columns(ev: Evaluation) -> list[str]:
    """The NON-PRIVATE per-configuration columns some row has (summary keys, without _mean)."""
    cols = [c for c in UTILITY_COLUMNS if any(f"{c}_mean" in r for r in ev.summary)]
    cols += list(dict.fromkeys(k for r in ev.summary for k in r
                               if k.startswith(("coverage_n", "next_word"))))
    return cols


def _cell(row: dict, column: str) -> str:
    key = f"{column}_mean" if column in UTILITY_COLUMNS else column
    return format_value(column, row[key]) if key in row else ""


def captions(ev: Evaluation) -> dict[str, str]:
    """What each plot shows, in words (the report's figure captions)."""
    d0s = sorted({s["max_items_per_user"] for s in ev.summary})
    eps = sorted({s["epsilon"] for s in ev.summary})
    repeats = ev.summary[0]["repeats"] if ev.summary else 0
    delta = ev.summary[0]["delta"] if ev.summary else 0
    key = _example_key(ev, eps[-1]) if eps else None
    points = (f"the mean of {repeats} runs with ± one standard deviation as error bars"
              if repeats > 1 else "one run per point")
    shown = (f"; red dots mark the items {key[0]} released at ε = {key[1]:g}, Δ0 = {key[2]:,} "
             f"in one run (the largest release at that ε)" if key else "")
    return {
        "size_vs_epsilon.png":
            f"Released vocabulary size against ε (Δ0 = {d0s[-1]:,}, δ = {delta:g}): one line "
            f"per mechanism, {points}. Higher lines release more items for the same privacy.",
        "size_vs_max_items.png":
            f"Released vocabulary size against the per-user cap Δ0 (ε = {eps[-1]:g}): one line "
            f"per mechanism, {points}. It shows the cap each mechanism releases most with.",
        "rank_frequency_NON_PRIVATE.png":
            f"{NON_PRIVATE}: every item of the corpus ranked by the number of users holding it "
            f"(grey line, log-log){shown}. It shows how far down the frequency curve a "
            f"release reaches.",
    }


def _code(text: str) -> str:
    """`command` in an (escaped) explanation as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _html(ev: Evaluation, pngs: dict[str, bytes]) -> str:
    esc = html.escape
    repeats = ev.summary[0]["repeats"] if ev.summary else 0
    extra = _measured_columns(ev)
    rows = "".join(
        "<tr>" + "".join(f"<td>{esc(v)}</td>" for v in (
            s["mechanism"], f"{s['epsilon']:g}", f"{s['delta']:g}",
            f"{s['max_items_per_user']:,}", _released(s), format_value("seconds", s["seconds_mean"]),
            *(_cell(s, c) for c in extra)))
        + "</tr>" for s in ev.summary)
    heads = "".join(f'<th class="npc">{esc(_head(c))}<br>({NON_PRIVATE})</th>' for c in extra)
    shown = ["mechanism", "ε", "δ", "Δ0", "released", "time (s)",
             *dict.fromkeys("n-gram coverage (n = k)" if c.startswith("coverage_n") else _head(c)
                            for c in extra)]
    glossary = "".join(
        f"<dt>{esc(h)}</dt><dd>{'<b class=npc>' + NON_PRIVATE + ':</b> ' if i >= 6 else ''}"
        f"{_code(esc(COLUMN_HELP.get(h, '')))}</dd>" for i, h in enumerate(shown))
    npv = ev.non_private
    np_rows = "".join(f"<tr><td>{esc(_np_label(k))}</td><td>{v:,}</td></tr>"
                      for k, v in npv.items() if k != "warning")
    ctx = ev.context
    holdout = ctx.get("holdout", 0.0)
    users = ctx.get("users_NON_PRIVATE")
    held = ctx.get("heldout_users_NON_PRIVATE", 0)
    users_text = "–" if users is None else (
        f"{users:,}" + (f" ({users - held:,} in the runs, {held:,} held out)" if held else ""))
    context_rows = [
        ("evaluated", ctx.get("source", "–")),
        ("one user", ctx.get("one_user") or "–"),
        (f"users ({NON_PRIVATE})", users_text),
        ("held-out share", f"{100 * holdout:g}% of users, by a fixed hash of the user id"
         if holdout else "none (no held-out columns)"),
        ("δ, repeats", f"δ = {ctx.get('delta', ev.summary[0]['delta'] if ev.summary else 0):g}, "
                       f"{_runs(repeats)} per configuration"),
        ("dp-vocab", ctx.get("dp_vocab_version", "–")),
        ("date", ctx.get("date", "–")),
    ]
    header = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>"
                     for k, v in context_rows)
    caps = captions(ev)
    imgs = "".join(
        f'<figure><img alt="{esc(caps.get(n, n))}" src="data:image/png;base64,'
        f'{base64.b64encode(b).decode()}"><figcaption>{esc(caps.get(n, n))}</figcaption>'
        f'</figure>' for n, b in pngs.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dp-vocab evaluation</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:right}}
td{{white-space:nowrap}}td:first-child,th:first-child{{text-align:left}}.wide{{overflow-x:auto}}
table.ctx th{{text-align:left;background:#f4f4f4}}table.ctx td{{text-align:left;white-space:normal}}
code{{background:#f4f4f4;padding:0 0.2em}}
dt{{font-weight:bold;margin-top:0.4em}}dd{{margin-left:1.5em}}figcaption{{font-size:0.95em}}
.npc{{color:#c00}}.np{{border:2px solid #c00;padding:0.5em 1em;background:#fff4f4}}img{{max-width:100%}}</style>
</head><body>
<h1>dp-vocab evaluation</h1>
<table class="ctx">{header}</table>
<h2>Results</h2>
<p>One row per configuration (mechanism, ε, Δ0): {_runs(repeats)} of it on the same extracted
item sets. Columns in red are {NON_PRIVATE}: computed from the raw data without noise, for the data
owner's eyes only.</p>
<div class="wide"><table><tr><th>mechanism</th><th>ε</th><th>δ</th><th>Δ0</th>
<th>released{" (mean ± sd)" if repeats > 1 else ""}</th>
<th>time (s)</th>{heads}</tr>{rows}</table></div>
<h3>What the columns mean</h3>
<dl>{glossary}</dl>
{_tokenizer_html(ev)}
<div class="np"><h2>{NON_PRIVATE}: the corpus itself</h2><p>{esc(npv['warning'])}</p>
<table>{np_rows}</table></div>
<h2>Plots</h2>
{imgs}
</body></html>
"""


TOKENIZER_HELP = (
    "The recipe's Hugging Face tokenizer, trained on the training users at each ε, and the "
    "tokenizer trained without privacy by tokenizers' own trainer on the same users' raw text, "
    "with the same pipeline (normaliser, pre-tokenizer, special tokens), model and size. Size: "
    "the exported tokenizer's vocabulary size. Tokens per word: tokens of the held-out users' "
    "text (no special tokens) per word (a run of letters/digits, with inner apostrophes, or one "
    "other symbol); lower is better. Private / non-private: the ratio of the two (×1.000: as "
    "good as without privacy). Unknown: unknown tokens per word.")


def tokenizer_rows(ev: Evaluation) -> list[list[str]]:
    """The tokenizer table's cells: ε, size, private, non-private, ratio, unknown rates."""
    def rows(r):
        base, base_unk = r["tokens_per_word_nonprivate"], r["unknown_rate_nonprivate"]
        return [f"{r['epsilon']:g}", f"{r['size']:,}", f"{r['tokens_per_word']:.3f}",
                "n/a" if base is None else f"{base:.3f}",
                "n/a" if base is None else f"×{r['tokens_per_word'] / base:.3f}",
                f"{100 * r['unknown_rate']:.3f}%",
                "n/a" if base_unk is None else f"{100 * base_unk:.3f}%"]
    return [rows(r) for r in ev.tokenizers]


TOKENIZER_HEADS = ("ε", "size", "tokens per word", "tokens per word, non-private",
                   "private / non-private", "unknown", "unknown, non-private")


def _tokenizer_html(ev: Evaluation) -> str:
    if not ev.tokenizers:
        return ""
    esc = html.escape
    heads = "".join(f'<th{" class=npc" if i >= 2 else ""}>{esc(h)}</th>'
                    for i, h in enumerate(TOKENIZER_HEADS))
    rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
                   for r in tokenizer_rows(ev))
    return (f"<h2>The exported tokenizer on held-out users ({NON_PRIVATE})</h2>"
            f"<p>{esc(TOKENIZER_HELP)}</p><table><tr>{heads}</tr>{rows}</table>")


def _measured(obj):
    """NaN (a measure not taken, e.g. coverage without a holdout) as None: null in JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _measured(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_measured(v) for v in obj]
    return obj


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
        write_json(tmp / "results.json", _measured({
            "context": ev.context, "summary": ev.summary, "runs": ev.runs,
            "non_private": ev.non_private, "tokenizers_NON_PRIVATE": ev.tokenizers}))
        for name, data in pngs.items():
            (tmp / name).write_bytes(data)
        (tmp / "report.html").write_text(_html(ev, pngs), encoding="utf-8")
    return ["results.csv", "results.json", *pngs, "report.html"]


__all__ = ["Evaluation", "compare_tokenizers", "evaluate", "write_report"]
