"""Recipes: ``.cfg`` files (confection) resolved through the registries, and ``run_recipe()``.

A recipe has the sections ``[paths]``, ``[run]``, ``[corpus]``, ``[items]`` (with
``[items.tokenizer]``), ``[mechanism]``, optionally ``[budget]``, ``[counts]`` and ``[export]``.
Any other section, or an unknown key in ``[run]`` or ``[budget]``, is an error: a misspelt
``[budjet]`` must not silently drop the budget check. ``[paths]`` is free-form (variables).
"""

from __future__ import annotations

import configparser
import copy
import dataclasses
import difflib
import json
import math
import os
import re
import time
import warnings
from dataclasses import dataclass, field
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from confection import Config, ConfigValidationError

from ..version import __version__
from ..errors import DPVocabError, ExportNoteWarning, ParameterError, RecipeError
from ..export.output_dir import atomic_output_dir, check_output_dir, write_json
from ..bounding import Input
from ..privacy.accounting import Ledger
from ..privacy.params import check_delta, check_epsilon
from ..mechanisms.count_release import check_counts_route
from ..data.release import Release
from .shipped import PRESETS, find_recipe, shipped_recipes, write_recipe  # noqa: F401 (re-exported)

REQUIRED_SECTIONS = ("corpus", "items", "mechanism")
# section → the registry key its block must name; [paths], [run], [budget] are plain values
REGISTRY_SECTIONS = {"corpus": "@readers", "items": "@extractors", "mechanism": "@mechanisms",
                     "counts": "@counts", "export": "@exporters"}
SECTIONS = ("paths", "run", "budget", *REGISTRY_SECTIONS)
BUDGET_KEYS = ("epsilon", "delta", "counts_share")
RUN_DEFAULTS = {"seed": None, "key": None, "backend": "local", "scheduler_address": None,
                "n_workers": 2, "tls_ca_file": None, "tls_cert": None, "tls_key": None,
                "send_private_data_unencrypted": False}


@dataclass
class RunResult:
    """What ``run_recipe`` returns: the release, where it was written and its record."""

    release: Release
    output: Path
    files: list[str]
    record: dict
    timings: dict = field(default_factory=dict)
    # the exporters' notes (post-processing of the release; also in privacy.json)
    notes: list[str] = field(default_factory=list)
    # operator information (console only, never written): the lines skipped (empty documents,
    # and malformed lines on request)
    skipped: int = 0
    skip_reasons: list = field(default_factory=list)
    # what ``skipped`` counts: lines, table rows, or a text folder's files
    skip_unit: str = "line"


def parse_override_value(text: str) -> Any:
    """CLI values are JSON when they parse as JSON (numbers, true, null, lists), else strings."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_overrides(args: list[str]) -> dict[str, Any]:
    """``["--mechanism.epsilon", "1", "--paths.corpus=x"]`` → ``{"mechanism.epsilon": 1, ...}``."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or "." not in arg.split("=", 1)[0]:
            # a value after the value: most often a pattern the shell expanded into files
            glob = i > 0 and not arg.startswith("-") and not args[i - 1].startswith("--")
            hint = (" If it is one of the files of an unquoted pattern, quote the pattern so "
                    "that the shell leaves it alone: --paths.corpus 'data/*.jsonl'") \
                if glob else ""
            raise RecipeError(f"override {arg!r}: expected --section.key VALUE (e.g. "
                              f"--budget.epsilon 1).{hint}")
        if "=" in arg:
            key, value = arg[2:].split("=", 1)
            i += 1
        else:
            key = arg[2:]
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                value = "true"  # a bare flag
                i += 1
            else:
                value = args[i + 1]
                i += 2
        key = key.replace("-", "_")
        if not _OVERRIDE_KEY.fullmatch(key):
            raise RecipeError(f"override {'--' + key!r:.80}: expected --section.key VALUE, the "
                              f"section and key made of letters, digits and _ (e.g. "
                              f"--budget.epsilon 1 or --items.tokenizer.kind bert_parts)")
        out[key] = parse_override_value(value)
    return out


def _override_dict(overrides) -> dict[str, Any]:
    """Python's ``overrides``: ``{"budget.epsilon": 1.0}``, a section's dict
    (``{"budget": {"epsilon": 1.0}}``, set key by key: ``_flatten_sections``), and a key
    written as on the command line (``"--budget.epsilon"``)."""
    if overrides is None:
        return {}
    if not isinstance(overrides, Mapping):
        raise ParameterError("overrides", f"a {type(overrides).__name__}",
                             'a dict of {"section.key": value}, e.g. {"budget.epsilon": 1.0}')
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        key = key.removeprefix("--") if isinstance(key, str) else key
        section = isinstance(key, str) and isinstance(value, Mapping) \
            and _OVERRIDE_KEY.fullmatch(f"{key}.x")
        if not section and (not isinstance(key, str) or not _OVERRIDE_KEY.fullmatch(key)):
            raise RecipeError(f"override {key!r:.80}: expected a key \"section.key\" made of "
                              f"letters, digits and _, e.g. {{\"budget.epsilon\": 1.0}}")
        out[key] = value
    return out


# section.key[.key...]; a key may be a registry reference (@tokenizers)
_OVERRIDE_KEY = re.compile(r"[A-Za-z_]\w*(\.@?[A-Za-z_]\w*)+", re.ASCII)


def _check_override_targets(overrides: dict, cfg) -> None:
    """An override sets a value: not a whole section (confection fails on that with a
    TypeError), and not a key under a value."""
    for key, value in overrides.items():
        node, parts = cfg, key.split(".")
        for depth, part in enumerate(parts):
            if isinstance(node, dict) and part not in node and 0 < depth < len(parts) - 1:
                here = ".".join(parts[:depth])
                subs = [k for k, v in node.items() if isinstance(v, dict)]
                raise RecipeError(f"override --{key}: [{here}] has no section {part!r}; "
                                  + (f"its sections: {', '.join(f'[{here}.{k}]' for k in subs)}"
                                     if subs else "it has none") + ". A section is added in "
                                  "the recipe file (`dp-vocab init` copies a shipped one)")
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
            here = ".".join(parts[:depth + 1])
            if depth == len(parts) - 1 and isinstance(node, dict) and not isinstance(value, dict):
                example = next((k for k in node if not k.startswith("@")
                                and not isinstance(node[k], dict)), "KEY")
                raise RecipeError(f"override --{key}: [{here}] is a section of the recipe, not "
                                  f"a value; set one of its keys, e.g. --{here}.{example} VALUE")
            if depth < len(parts) - 1 and not isinstance(node, dict):
                raise RecipeError(f"override --{key}: {here} is a value, not a section; set "
                                  f"it with --{here} VALUE")


def load_recipe(recipe, overrides: dict[str, Any] | None = None) -> Config:
    """Read a recipe (path, text or dict) and apply dotted overrides; interpolated and checked
    for unknown sections and keys."""
    recipe = find_recipe(recipe)
    overrides = _override_dict(overrides)
    name = "<dict>" if isinstance(recipe, (dict, Config)) else \
        Path(recipe).stem if Path(recipe).parent == PRESETS else str(recipe)
    _check_text_values(overrides, "override")
    try:
        original = recipe
        if not isinstance(recipe, (dict, Config)):
            text = _read_recipe_text(Path(recipe))
            # sections first, uninterpolated: a misspelt [budjet] is named as such, not as a
            # broken ${budget.epsilon} reference
            original = Config().from_str(text, interpolate=False)
            _check_sections(original)
            if "run" not in original and any(k.split(".")[0] == "run" for k in overrides):
                text += "\n[run]\n"   # optional, all defaults: --run.seed 3 sets one
                original["run"] = {}
            _check_override_sections(overrides, original)
        overrides = _flatten_sections(overrides, original)
        _check_override_targets(overrides, original)
        _check_function_overrides(overrides, original)
        _check_plain_keys(overrides, original)
        if isinstance(recipe, Config):
            cfg = Config(recipe).interpolate() if not overrides else \
                Config().from_str(recipe.to_str(), overrides=overrides)
        elif isinstance(recipe, dict):
            cfg = Config().from_str(Config(recipe).to_str(), overrides=overrides)
        else:
            cfg = Config().from_str(text, overrides=overrides)
    except ConfigValidationError as e:
        raise _located(name, _config_error(e)) from None
    except (configparser.Error, ValueError) as e:
        raise _located(name, _first_line(e).replace("While reading from '<string>' ", "")) \
            from None
    _check_sections(cfg)
    _drop_keys_of_a_replaced_function(cfg, overrides, original)
    _check_text_values(cfg, "recipe")
    _apply_counts_share(cfg)
    run = {**RUN_DEFAULTS, **cfg.get("run", {})}
    unknown = set(run) - set(RUN_DEFAULTS)
    if unknown:
        raise RecipeError(f"recipe [run]: unknown key {sorted(unknown)[0]!r}; allowed: "
                          + ", ".join(RUN_DEFAULTS))
    cfg["run"] = run
    return cfg


def _located(name: str, msg: str) -> RecipeError:
    """A parse error naming the recipe's line like every other error (file:line: ...)."""
    m = re.search(r"\[line\s+(\d+)\]:? ?", msg)
    if m:
        msg = f"{msg[:m.start()]}{msg[m.end():]}".strip()
        return RecipeError(f"recipe {name}:{m.group(1)}: cannot parse: {msg}")
    return RecipeError(f"recipe {name}: {msg}")


def _read_recipe_text(path: Path) -> str:
    if not path.is_file():
        near = difflib.get_close_matches(path.name.removesuffix(".cfg"), shipped_recipes(), n=1)
        guess = f" Did you mean {near[0]}?" if near else ""
        raise RecipeError(f"recipe {path}: file not found.{guess} Give a recipe file, or the "
                          f"name of a shipped recipe: {', '.join(shipped_recipes())} "
                          f"(`dp-vocab recipes` describes them)")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise RecipeError(f"recipe {path}:{line}: not a UTF-8 text file ({e.reason}); a recipe "
                          f"is a .cfg text file (`dp-vocab recipes show quickstart`)") from None
    if "\x00" in text:
        line = text[:text.index("\x00")].count("\n") + 1
        raise RecipeError(f"recipe {path}:{line}: contains a NUL byte; a recipe is a .cfg text "
                          f"file (`dp-vocab recipes show quickstart`)")
    return text


def _node(cfg, path: str):
    """The block at a dotted path of a recipe (None if there is none)."""
    block: Any = cfg
    for part in path.split("."):
        block = block.get(part) if isinstance(block, dict) else None
    return block


def _parameters(ref: str, name) -> dict | None:
    """The parameters of the function registered as ``name`` under ``ref`` (``@readers``);
    None when there is none, or it takes any keyword."""
    import inspect
    from ..registry import registry
    try:
        params = inspect.signature(getattr(registry, ref[1:]).get(name)).parameters
    except Exception:   # an unregistered name: resolving the recipe says so
        return None
    return None if any(p.kind is p.VAR_KEYWORD for p in params.values()) else dict(params)


def _drop_keys_of_a_replaced_function(cfg: Config, overrides: dict, original) -> None:
    """``--corpus.@readers dp_vocab.text_folder.v1`` on a JSONL recipe: the recipe's keys that
    the function it named took and the new one does not (``user_field``) are dropped, so that
    one override switches the function. A key neither takes (a misspelling) stays, and is
    refused; keys given as overrides are kept, and checked."""
    for key, name in overrides.items():
        path, _, ref = key.rpartition(".")
        old_block, block = _node(original, path), _node(cfg, path)
        if not ref.startswith("@") or not isinstance(old_block, dict) \
                or not isinstance(block, dict) or old_block.get(ref) in (None, name):
            continue
        old, new = _parameters(ref, old_block[ref]), _parameters(ref, name)
        if old is None or new is None:
            continue
        for k in [k for k in block if k in old and k not in new
                  and f"{path}.{k}" not in overrides]:
            del block[k]


def _flatten_sections(overrides: dict, original) -> dict:
    """A dict given for a section of the recipe sets its keys one by one, at any depth
    (``{"items.tokenizer": {"pattern": "x"}}`` keeps the tokenizer's other keys)."""
    out: dict = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(_node(original, key), dict):
            out.update(_flatten_sections({f"{key}.{k}": v for k, v in value.items()}, original))
        else:
            out[key] = value
    return out


def _check_function_overrides(overrides: dict, original) -> None:
    """An override of a function reference (``--corpus.@readers NAME``) names a function, in
    a block that names its function with that key."""
    for key, value in overrides.items():
        path, _, ref = key.rpartition(".")
        if not ref.startswith("@"):
            continue
        section = path.split(".")[0]
        if section not in REGISTRY_SECTIONS:
            raise RecipeError(f"override --{key}: [{section}] names no function; functions are "
                              "named in " + ", ".join(f"[{s}]" for s in REGISTRY_SECTIONS))
        if not isinstance(value, str):
            raise RecipeError(f"override --{key}: expected the name of a registered function, "
                              f"e.g. \"dp_vocab.csv.v1\", got {value!r:.60}")
        block = _node(original, path)
        have = [k for k in block if k.startswith("@")] if isinstance(block, dict) else []
        if have and ref not in have:
            where = [p for p in _blocks_with(original.get(section), section)
                     if ref in _node(original, p)]
            raise RecipeError(f"override --{key}: [{path}] names its function with {have[0]}: "
                              f"--{path}.{have[0]} NAME"
                              + (f"; {ref} is in [{where[0]}]: --{where[0]}.{ref} NAME"
                                 if where else ""))


def _check_plain_keys(overrides: dict, original) -> None:
    """An override of [paths], [run] or [budget] names a key that section takes: a misspelt
    ``--paths.corpuss`` would otherwise add a variable nothing reads, and run on the recipe's
    own corpus."""
    for key in overrides:
        section, _, rest = key.partition(".")
        allowed = {"paths": list(original.get("paths") or {}), "run": list(RUN_DEFAULTS),
                   "budget": list(BUDGET_KEYS)}.get(section)
        if allowed is None or rest in allowed:
            continue
        near = difflib.get_close_matches(rest, allowed, n=1)
        what = "its keys" if section == "paths" else "allowed"
        raise RecipeError(f"override --{key}: [{section}] has no key {rest!r}"
                          + (f" (did you mean --{section}.{near[0]}?)" if near else "")
                          + (f"; {what}: {', '.join(allowed)}" if allowed else
                             "; it is empty in this recipe")
                          + (". A new [paths] variable is read only where the recipe file "
                             "refers to it (${paths.NAME}): add both there"
                             if section == "paths" else ""))


def _blocks_with(block, path: str) -> list[str]:
    """The dotted paths of ``block`` and every block below it."""
    out = [path]
    for k, v in block.items() if isinstance(block, dict) else ():
        if isinstance(v, dict):
            out += _blocks_with(v, f"{path}.{k}")
    return out


def _check_override_sections(overrides: dict, cfg: Config) -> None:
    """An override must name a section the recipe has (confection's own message names no fix)."""
    for key in overrides:
        section = key.split(".", 1)[0]
        if section not in cfg:
            hint = "a section of dp-vocab recipes, but not in this recipe" if section in SECTIONS \
                else "not a recipe section"
            raise RecipeError(f"override --{key}: [{section}] is {hint}; this recipe's sections: "
                              + ", ".join(f"[{s}]" for s in cfg)
                              + (". Add the section to the recipe to set it"
                                 if section in SECTIONS else ""))


def _check_sections(cfg: Config) -> None:
    unknown = [k for k in cfg if k not in SECTIONS]
    if unknown:
        raise RecipeError(f"recipe: unknown section [{unknown[0]}]; allowed sections: "
                          + ", ".join(f"[{s}]" for s in SECTIONS))
    missing = [s for s in REQUIRED_SECTIONS if s not in cfg]
    if missing:
        raise RecipeError(f"recipe: missing section [{missing[0]}]; a recipe needs "
                          + ", ".join(f"[{s}]" for s in REQUIRED_SECTIONS))
    for name in ("paths", "run", "budget"):
        if name in cfg and not isinstance(cfg[name], dict):
            raise RecipeError(f"recipe [{name}]: expected a section of key = value lines")
    budget = cfg.get("budget") or {}
    extra = [k for k in budget if k not in BUDGET_KEYS]
    if extra:
        raise RecipeError(f"recipe [budget]: unknown key {extra[0]!r}; allowed: "
                          + ", ".join(BUDGET_KEYS))
    for name, key in REGISTRY_SECTIONS.items():
        if name not in cfg:
            continue
        block = cfg[name]
        if name == "export" and isinstance(block, dict) and key not in block and block and \
                all(isinstance(v, dict) for v in block.values()):
            blocks = {f"export.{k}": v for k, v in block.items()}
        else:
            blocks = {name: block}
        for where, b in blocks.items():
            if not isinstance(b, dict) or key not in b:
                raise RecipeError(f"recipe [{where}]: missing {key} = \"...\" naming a "
                                  f"registered function; see `dp-vocab recipes show quickstart`")
    items = cfg["items"]
    if isinstance(items.get("tokenizer"), dict) and "@tokenizers" not in items["tokenizer"]:
        raise RecipeError("recipe [items.tokenizer]: missing @tokenizers = \"...\", e.g. "
                          "\"dp_vocab.regex.v1\"")


def _check_text_values(obj, where: str) -> None:
    """Recipe strings are written back into recipe.cfg: they must be encodable UTF-8 (a lone
    surrogate comes from a non-UTF-8 file name or argument)."""
    def walk(o, path):
        if isinstance(o, str):
            try:
                o.encode("utf-8")
            except UnicodeEncodeError:
                raise RecipeError(f"{where} {path}: contains bytes that are not valid UTF-8 (a "
                                  f"non-UTF-8 file name or argument); rename the file or use "
                                  f"UTF-8 text") from None
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(k, path)
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v, path)
    walk(obj, "")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


_EXPECTED = {"bool": "true or false", "int": "an integer", "float": "a number",
             "str": "a string in quotes, e.g. \"text\""}


def _type_message(msg: str) -> str:
    """confection's "at root: 'maybe' is not <class 'bool'>" as "expected true or false, got
    'maybe'" (a recipe value: public)."""
    m = re.fullmatch(r"at root: (.*) is not <class '(\w+)'>", msg)
    if m is None or m.group(2) not in _EXPECTED:
        return msg
    return f"expected {_EXPECTED[m.group(2)]}, got {m.group(1)}"


def _config_error(e: ConfigValidationError) -> str:
    errors = getattr(e, "errors", None) or []
    if errors:
        parts = []
        for err in errors[:3]:
            loc = ".".join(str(x) for x in err.get("loc", []))
            msg = _type_message(str(err.get("msg")))
            if msg.endswith(", got True") and loc:   # most often a bare --section.key flag
                msg = (f"{msg[:-4]}true (on the command line, --{loc} with no value after it "
                       f"means true: give the value, e.g. --{loc} VALUE)")
            parts.append(f"{loc}: {msg}" if loc else msg)
        return "; ".join(parts)
    # a syntax error: confection's description holds configparser's "[line N]: 'text'"
    desc = (getattr(e, "desc", None) or "").replace(
        "Make sure the sections and values are formatted correctly.", "")
    lines = [ln.strip() for ln in desc.splitlines() if ln.strip()]
    lines = [ln.replace("file: '<string>', line:", "[line") + "]"
             if ln.startswith("file: '<string>'") else ln
             for ln in lines if not ln.startswith("Source contains parsing errors")]
    found = " ".join(lines)[:300]
    return (found or _first_line(e)) + " (`dp-vocab recipes show quickstart` shows the format)"


def resolve_sections(cfg: Config, names: tuple[str, ...]) -> dict:
    """Build the objects the named recipe sections describe (reader, extractor, mechanism...)."""
    from ..registry import registry
    out: dict = {}
    for name in names:
        if name not in cfg:
            continue
        for label, part in _parts(name, cfg[name]):
            _resolve_part(registry, name, label, part, out)
    return out


def _parts(name: str, section) -> list[tuple[str, dict]]:
    """A section, or its sub-sections one by one ([export.spacy], [export.tokenizer]) so an
    error names the sub-section."""
    subs = isinstance(section, dict) and section and not any(k.startswith("@") for k in section) \
        and all(isinstance(v, dict) and any(k.startswith("@") for k in v) for v in section.values())
    if subs:
        return [(f"{name}.{k}", {k: v}) for k, v in section.items()]
    return [(name, section)]


def _resolve_part(registry, name: str, label: str, part, out: dict) -> None:
    try:
        resolved = registry.resolve(Config({name: part}), validate=True)
        if label != name:
            out.setdefault(name, {}).update(resolved[name])
        else:
            out.update(resolved)
    except ParameterError as e:  # name the recipe field: mechanism.epsilon, not epsilon
        rest = e.name[len(name) + 1:] if e.name.startswith(name + ".") else e.name
        # a key of a function nested in the section (items.tokenizer.path, not items.path)
        root = {name: part}
        holders = [p for p in _blocks_with(_node(root, label), label) if rest in _node(root, p)]
        where = holders[0] if len(holders) == 1 else label
        raise ParameterError(f"{where}.{rest}", e.value, e.allowed, e.fix) from None
    except ConfigValidationError as e:
        raise RecipeError(f"recipe: {_config_error(e)}{_accepted_keys(registry, e, part)}"
                          f"{_missing_hint(e)}") from None
    except TypeError as e:
        raise RecipeError(f"recipe [{label}]: {e}") from None
    except Exception as e:  # catalogue's RegistryError has no public class to import
        if type(e).__name__ == "RegistryError":
            raise RecipeError(f"recipe [{label}]: {_unregistered(registry, part)}") from None
        raise


def _unregistered(registry, part) -> str:
    """What a recipe names that no registry holds, and the registered name it most likely
    meant (recipes take versioned names: "dp_vocab.gw.v1", not "gw")."""
    from ..registry import short_names
    blocks = [part]
    while blocks:
        block = blocks.pop(0)
        if not isinstance(block, dict):
            continue
        blocks += list(block.values())
        for key, name in block.items():
            table = getattr(registry, key[1:], None) if key.startswith("@") else None
            if table is None or not isinstance(name, str):
                continue
            known = sorted(table.get_all())
            if name in known:
                continue
            # "gw" → dp_vocab.gw.v1; a near spelling ("dp_vocab.csv.v2"); a part of a name
            guess = short_names(known).get(name) \
                or next(iter(difflib.get_close_matches(name, known, n=1, cutoff=0.75)), None) \
                or next((k for k in known if len(name) >= 3 and f".{name}." in f".{k}"), None)
            hint = f" Did you mean {guess!r}?" if guess else ""
            listed = "`dp-vocab mechanisms` lists them" if key == "@mechanisms" else \
                "registered: " + ", ".join(known)
            return (f"{key} = {name!r} is not registered.{hint} Recipes give the full "
                    f"versioned name, \"NAMESPACE.NAME.vN\" ({listed}).")
    return "a name in this section is not registered (`dp-vocab mechanisms` lists the mechanisms)"


def _accepted_keys(registry, e: ConfigValidationError, part) -> str:
    """For a misspelt key ("unexpected argument"): the keys its registered function takes."""
    import inspect
    if not any(str(err.get("msg", "")).startswith("unexpected argument")
               for err in getattr(e, "errors", None) or []):
        return ""
    # the block holding the misspelt key: [items.tokenizer] for items.tokenizer.nosuch
    blocks = []
    for err in getattr(e, "errors", None) or []:
        # confection's loc: ["items.tokenizer", "nosuch"] (from the section), or ["spacy",
        # "langg"] for a part of [export] (from the part)
        steps = ".".join(str(x) for x in err.get("loc", [])).split(".")[:-1]
        for start in (1, 0):
            block = _node(part, ".".join(steps[start:])) if steps[start:] else part
            if isinstance(block, dict) and any(k.startswith("@") for k in block):
                blocks.append(block)
                break
        if blocks:
            break
    for block in blocks:
        for key, name in block.items():
            if not (key.startswith("@") and isinstance(name, str)):
                continue
            try:
                func = getattr(registry, key[1:]).get(name)
                params = inspect.signature(func).parameters.values()
            except (AttributeError, TypeError, ValueError):   # only a hint
                return ""
            names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            return f"; {name} takes: " + ", ".join(names) if names else ""
    return ""


_MISSING_HINTS = {
    ("items", "tokenizer"): '; add an [items.tokenizer] section, e.g. @tokenizers = '
                            '"dp_vocab.regex.v1" (`dp-vocab recipes show quickstart`)',
    **{("mechanism", key): "; take the budget from [budget]: epsilon = ${budget.epsilon} and "
                           "delta = ${budget.delta} in [mechanism]"
       for key in ("epsilon", "delta")},
    **{("counts", key): "; give [budget] a counts_share (the share of the budget the counts "
                        "take), or [counts] its own epsilon and delta"
       for key in ("epsilon", "delta")},
}


def _missing_hint(e: ConfigValidationError) -> str:
    """How to give the first required argument a recipe lacks, where a recipe usually
    takes it from."""
    for err in getattr(e, "errors", None) or []:
        if str(err.get("msg", "")).startswith("missing required argument"):
            loc = ".".join(str(x) for x in err.get("loc", [])).split(".")
            return _MISSING_HINTS.get((loc[0], loc[-1]), "") if len(loc) == 2 else ""
    return ""


def _apply_counts_share(cfg: Config) -> None:
    """[budget] counts_share = s: the [counts] stage gets s of budget.epsilon and budget.delta
    and [mechanism] the rest, so that --budget.epsilon alone scales the whole recipe. The two
    sections then set no epsilon or delta of their own (one source for each number)."""
    budget = cfg.get("budget") or {}
    if "counts_share" not in budget:
        return
    share = budget["counts_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) \
            or not 0.0 < share < 1.0:
        raise ParameterError("budget.counts_share", share, "a number between 0 and 1 (the share "
                             "of [budget] the [counts] stage spends)", "For example 0.5.")
    if "counts" not in cfg:
        raise RecipeError("recipe [budget]: counts_share needs a [counts] section; remove "
                          "counts_share or add [counts]")
    for name in ("mechanism", "counts"):
        for key in ("epsilon", "delta"):
            if key in cfg[name]:
                raise RecipeError(f"recipe [{name}]: {key} is set both by {name}.{key} and by "
                                  f"budget.counts_share; remove one of them")
    declared = declared_budget(cfg)
    if declared is None:
        raise RecipeError("recipe [budget]: counts_share needs budget.epsilon and budget.delta")
    eps, delta = declared
    counts_eps = eps * share
    cfg["counts"]["epsilon"] = counts_eps
    counts_delta = 0.0
    if _takes_delta(cfg["counts"].get("@counts")):   # discrete Laplace counts spend no δ
        counts_delta = cfg["counts"]["delta"] = delta * share
    # the rest, rounded down: the two stages' sum never exceeds the budget
    cfg["mechanism"]["epsilon"] = math.nextafter(eps - counts_eps, 0.0)
    cfg["mechanism"]["delta"] = math.nextafter(delta - counts_delta, 0.0)


def _raise_shares_together(cfg: Config, declared: tuple[float, float] | None) -> None:
    """With [budget] counts_share, when both stages add Gaussian noise (zCDP), raise their ε
    together, in the share's ratio, to the largest whose zCDP composition (the ledger's
    ``Ledger.zcdp``) still fits [budget]: zCDP composes two Gaussians more tightly than the sum
    of their ε. Their δ stay as split, so the ledger's δ is unchanged. Public inputs only."""
    if declared is None or "counts_share" not in (cfg.get("budget") or {}):
        return
    eps = declared[0]
    base = (cfg["mechanism"]["epsilon"], cfg["counts"]["epsilon"])

    def composed(scale: float) -> float:
        cfg["mechanism"]["epsilon"], cfg["counts"]["epsilon"] = (e * scale for e in base)
        staged = resolve_sections(cfg, ("mechanism", "counts"))
        found = Ledger(staged["mechanism"].stages() + [staged["counts"].stage("counts")]).zcdp()
        return math.inf if found is None else found[0]

    lo, hi = 1.0, 2.0
    try:
        if composed(lo) > eps:
            return
        while composed(hi) <= eps:
            lo, hi = hi, 2.0 * hi
        for _ in range(24):   # the stages' ε within a factor 1 + 1e-7 of the largest that fits
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if composed(mid) <= eps else (lo, mid)
    except (ParameterError, RecipeError):   # reported where the sections resolve; lo fits
        pass
    finally:
        cfg["mechanism"]["epsilon"], cfg["counts"]["epsilon"] = (e * lo for e in base)


def _takes_delta(counts_name) -> bool:
    import inspect
    from ..registry import registry
    try:
        made = registry.counts.get(counts_name)
    except Exception:   # noqa: BLE001 - an unknown name is reported where the section resolves
        return True
    return "delta" in inspect.signature(made).parameters


def declared_budget(cfg: Config) -> tuple[float, float] | None:
    """[budget]'s (ε, δ), checked, or None without a [budget]. Checked before the mechanism,
    which takes them by ${budget.…}: a bad --budget.epsilon is named as the user wrote it."""
    budget = dict(cfg.get("budget", {}) or {})
    if not budget:
        return None
    for k in ("epsilon", "delta"):
        if k not in budget:
            raise RecipeError(f"recipe [budget]: missing {k}; declare both epsilon and delta")
    return (check_epsilon(budget["epsilon"], "budget.epsilon"),
            check_delta(budget["delta"], "budget.delta"))


def check_budget(declared: tuple[float, float] | None, ledger: Ledger) -> dict:
    """The declared total budget; the composed stages must fit before any data is read."""
    if declared is None:
        eps, delta, _ = ledger.total()
        return {"epsilon": eps, "delta": delta, "declared": False}
    ledger.check(*declared)
    return {"epsilon": declared[0], "delta": declared[1], "declared": True}


@dataclass(frozen=True)
class Plan:
    """A run, fully validated, before any private data is read: what to read and how, the
    stages that read it (each in the ledger), the budget they fit, and where to write."""

    cfg: Config
    output: Path
    force: bool
    inputs: list[Path]              # the recipe and corpus: the output must not contain them
    reader: Any
    extractor: Any
    mechanism: Any                  # the selection stage
    counter: Any                    # the [counts] stage, or None
    ledger: Ledger
    budget: dict
    exporters: list
    run: dict                       # [run]: backend settings
    random: Any                     # RandomSource: OS randomness, or seeded (stamped)
    key: bytes | None               # the user-order key when given (research runs)


def plan_run(recipe, output, overrides: dict[str, Any] | None = None,
             force: bool = False) -> Plan:
    """Parse and check everything a run needs (recipe, parameters, budget, exporters, output
    location, corpus path); build the ledger. Reads no private data."""
    from ..backends import BACKENDS, check_run
    from ..bounding import check_key
    from ..privacy.noise import RandomSource
    from ..registry import check_registered_name

    recipe = find_recipe(recipe)
    cfg = load_recipe(recipe, overrides)
    inputs = _input_paths(recipe, cfg)
    check_output_dir(output, force, inputs, _searched_folders(cfg))
    declared = declared_budget(cfg)
    _raise_shares_together(cfg, declared)
    staged = resolve_sections(cfg, ("mechanism", "counts"))
    mechanism, counter = staged["mechanism"], staged.get("counts")
    for name, made in (("mechanism", mechanism), ("counts", counter)):
        if made is not None:   # its records carry the name the recipe gives
            check_registered_name(name, cfg[name][REGISTRY_SECTIONS[name]], made)
    check_counts_route(mechanism, counter)
    if mechanism.input is Input.SEQUENCES and counter is not None:
        raise RecipeError(f"recipe [counts]: {mechanism.registry_name} releases n-grams level by "
                          f"level; a separate count release is not supported for it")
    ledger = Ledger(mechanism.stages() + ([counter.stage("counts")] if counter else []))
    budget = check_budget(declared, ledger)
    objs = resolve_sections(cfg, ("items", "export"))
    extractor, exporters = objs["items"], _exporters(objs.get("export"))
    mechanism = mechanism.for_extractor(extractor)   # a public item list follows [items]
    has_counts = counter is not None or mechanism.publishes_counts
    for e in exporters:
        if getattr(e, "needs_counts", False) and not has_counts:
            raise RecipeError(f"recipe [export]: {e.name} ({getattr(e, 'model', '')}) needs DP "
                              f"counts: add a [counts] section or set mechanism.noisy_counts = "
                              f"true (count_laplace). Nothing was read or written.")
    _check_special_tokens(exporters, extractor)
    for e in exporters:
        if getattr(e, "like", None) is not None:
            e.like.check_items(extractor)
    run = cfg["run"]
    if run["backend"] not in BACKENDS:
        raise ParameterError("run.backend", run["backend"], " or ".join(map(repr, BACKENDS)))
    check_run(run)
    seed = run["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ParameterError("run.seed", seed, "null (OS randomness) or an integer >= 0")
    try:
        key = check_key(run["key"]) if run["key"] is not None else None
    except ParameterError as e:
        raise ParameterError("run.key", e.value, e.allowed, e.fix) from None
    reader = resolve_sections(cfg, ("corpus",))["corpus"]  # checks the corpus path exists
    return Plan(cfg=cfg, output=Path(output), force=force, inputs=inputs, reader=reader,
                extractor=extractor, mechanism=mechanism, counter=counter, ledger=ledger,
                budget=budget, exporters=exporters, run=run, random=RandomSource(seed), key=key)


def execute(plan: Plan, progress: Callable | None = None,
            on_stage: Callable[[str], None] | None = None) -> tuple[Release, dict, dict]:
    """Read the private data and run every stage of the ledger, in order. Returns the release
    (with the ledger's composed guarantee), the backend's description and timings (operator
    information: they scale with the data, so they are never written)."""
    from ..backends import make_backend

    backend = make_backend(plan.run)
    timings = {}
    try:
        t0 = time.perf_counter()
        data = backend.load(plan.reader, plan.extractor,
                            plan.mechanism.input is Input.SEQUENCES, progress)
        # data: private user data where the backend keeps it (bounding.UserData)
        timings["extract_s"] = time.perf_counter() - t0
        if on_stage is not None:
            on_stage("release")
        t1 = time.perf_counter()
        release = plan.mechanism.release(data, key=plan.key, random=plan.random)
        if plan.counter is not None:   # the [counts] stage, over the released vocabulary
            release = dataclasses.replace(
                release, counts=plan.counter.release_counts(data, release.items, plan.random),
                counts_info=plan.counter.info())
        timings["release_s"] = time.perf_counter() - t1
        del data
    finally:
        backend.close()
    eps_total, delta_total, _ = plan.ledger.total()
    release = dataclasses.replace(release, epsilon=eps_total, delta=delta_total,
                                  ledger=[s.to_dict() for s in plan.ledger.stages])
    return release, backend.describe(), timings


def report(plan: Plan, release: Release, backend: dict) -> dict:
    """privacy.json: built here only, from the release, the parameters and public inputs."""
    record = {
        "library": {"name": "dp-vocab", "version": __version__},
        **release.to_privacy_record(),
        "composition": plan.ledger.to_dict(),
        "budget": plan.budget,
        "user_order_key": "given in recipe (reproducible run)" if plan.key is not None
        else "fresh random key, not stored",
        "corpus": plan.reader.describe(),
        "items": plan.extractor.describe(),
        "backend": backend,
    }
    _assert_finite(record)
    return record


def write(plan: Plan, release: Release, record: dict) -> tuple[list[str], dict]:
    """Every output file, into a temporary directory renamed into place at the end. Returns
    the files and the record as written: ``record`` with the exporters' notes."""
    context = {"items": plan.extractor.describe(), "output": str(plan.output.resolve()),
               "record": record}
    with atomic_output_dir(plan.output, plan.force, plan.inputs) as tmp:
        files, notes = [], []
        for e in plan.exporters:
            exported = e.export(release, tmp, context)
            files += exported.files
            notes += exported.notes
        record = {**record, "export_notes": notes}
        write_json(tmp / "privacy.json", record)
        (tmp / "recipe.cfg").write_text(_as_written(plan.cfg), encoding="utf-8")
        files += ["privacy.json", "recipe.cfg"]
    return files, record


def _as_written(cfg: Config) -> str:
    """The recipe to write beside the release: with [budget] counts_share, the stages' ε and δ
    it derives are left out, so that the file runs again as it stands; a given user-order key
    is not written (it must stay as secret as a fresh one: proofs README §1)."""
    out = Config(copy.deepcopy(dict(cfg)))
    if "counts_share" in (cfg.get("budget") or {}):
        for name in ("mechanism", "counts"):
            for key in ("epsilon", "delta"):
                out[name].pop(key, None)
    header = ""
    if (out.get("run") or {}).get("key") is not None:
        out["run"]["key"] = None
        header = ("# run.key was given and is not written here: a user-order key must stay "
                  "secret.\n# Give it again (--run.key KEY) to repeat this run's user order.\n")
    return header + out.to_str() + "\n"


def run_recipe(recipe, output, overrides: dict[str, Any] | None = None, force: bool = False,
               progress: Callable | None = None,
               on_stage: Callable[[str], None] | None = None) -> RunResult:
    """Run a recipe end to end, as ``dp-vocab run`` does: plan (validate everything; no data
    is read) → execute (read the corpus, run the ledger's stages) → report (privacy.json) →
    write (atomically into ``output``).

    ``run_recipe("quickstart", "out/q", overrides={"budget.epsilon": 1.0})``

    Parameters
    ----------
    recipe : str, PathLike, dict or confection.Config
        A recipe file (``.cfg``), the name of a shipped recipe (``"quickstart"``;
        ``dp-vocab recipes`` lists them, ``dp_vocab.recipes.write_recipe(name, path)`` copies
        one to edit), or the recipe itself as a dict or Config.
    output : str or PathLike
        The output directory, created; it must not exist unless ``force``.
    overrides : dict or None
        Recipe values to replace, keyed by ``"section.key"`` as on the command line
        (``--budget.epsilon 1``): ``{"budget.epsilon": 1.0, "paths.corpus":
        "my.jsonl.gz", "run.seed": 3, "export.vocab_size": 8000}``. Values are Python values
        (numbers, strings, booleans, None, lists); the section must exist in the recipe
        (``run.*`` always may).
    force : bool
        Replace an existing ``output`` (only an empty one or a previous dp-vocab output).
    progress : callable or None
        Called with the reader while the corpus is read; ``reader.progress()`` gives (bytes
        read, total bytes).
    on_stage : callable or None
        Called with ``"release"`` when the corpus has been read and the release starts, and
        with ``"export"`` when the outputs are written (a tokenizer export trains its model
        then).

    Returns
    -------
    RunResult
        ``.release`` (a ``Release``: ``.items``, the released strings in lexicographic
        order; ``.counts``, noisy counts when paid for; ``.epsilon``, ``.delta``, the composed
        guarantee; ``.ledger``, its stages), ``.output`` (the directory), ``.files`` (the files
        written: ``vocab.txt``, ``privacy.json``, ``recipe.cfg`` and the exports), ``.record``
        (privacy.json's content), ``.notes`` (where an export differs from the recipe's
        request; each also issued as an ``ExportNoteWarning``), ``.timings`` and ``.skipped`` /
        ``.skip_reasons`` / ``.skip_unit`` (operator information from the private data without
        noise: print them, never publish them).

    Raises
    ------
    RecipeError, ParameterError, BudgetExceededError, OutputError
        Before any data is read: the recipe, a parameter, the budget or the output location.
    CorpusError
        The corpus cannot be read (file, line and field named; never a value).
    """
    plan = plan_run(recipe, output, overrides, force)
    release, backend, timings = execute(plan, progress, on_stage)
    record = report(plan, release, backend)
    if on_stage is not None:
        on_stage("export")
    start = time.perf_counter()
    files, record = write(plan, release, record)
    timings = {**timings, "export_s": time.perf_counter() - start}
    for note in record["export_notes"]:   # seen from Python too, not only on the console
        warnings.warn(note, ExportNoteWarning, stacklevel=2)
    return RunResult(release=release, output=plan.output, files=files, record=record,
                     timings=timings, notes=record["export_notes"],
                     skipped=getattr(plan.reader, "skipped", 0),
                     skip_reasons=list(getattr(plan.reader, "skip_reasons", [])),
                     skip_unit=getattr(plan.reader, "unit", "line"))


def _check_special_tokens(exporters: list, extractor) -> None:
    """An extra special token that the extractor yields as one item (a word such as "the")
    would also match inside text ("theory" → "the" + ...): refuse it before reading data."""
    for e in exporters:
        for token in getattr(e, "extra_special_tokens", []):
            if extractor(token) == [extractor.normalize(token)]:
                raise ParameterError("export.special_tokens", token,
                                     "tokens that text cannot produce as a word",
                                     "Wrap it in brackets, e.g. \"<" + token + ">\".")


def output_guards(recipe, overrides: dict[str, Any] | None = None) -> tuple[list, list]:
    """``check_output_dir``'s ``protect`` and ``read_below`` for a recipe with ``overrides``, as
    ``plan_run`` checks them: the recipe file and its corpus, and the folders its reader
    searches."""
    recipe = find_recipe(recipe)
    cfg = load_recipe(recipe, overrides)
    return _input_paths(recipe, cfg), _searched_folders(cfg)


def _input_paths(recipe, cfg: Config) -> list[Path]:
    """The recipe file and the corpus location (the fixed part of a glob): an output must not
    contain them."""
    out = [] if isinstance(recipe, (dict, Config)) else [Path(recipe)]
    corpus = _corpus_path(cfg)
    if corpus is not None:
        fixed = corpus[0]
        out.append(Path(fixed) if fixed else Path("."))
    return out


def _corpus_path(cfg: Config) -> tuple[str, str | None] | None:
    """[corpus] path as (its fixed part, the rest from the first wildcard on, or None without
    one), or None when the section names no path."""
    corpus = cfg["corpus"].get("path")
    if not (isinstance(corpus, str) and corpus):
        return None
    parts = re.split(r"[*?\[]", corpus, maxsplit=1)
    return parts[0], (corpus[len(parts[0]):] if len(parts) == 2 else None)


def _searched_folders(cfg: Config) -> list[Path]:
    """Folders whose sub-folders the corpus reader searches: a text folder (its pattern may
    reach sub-folders), or the fixed part of a glob that can descend (``**`` or a ``/`` after
    the first wildcard)."""
    corpus = _corpus_path(cfg)
    if corpus is None:
        return []
    fixed, pattern = corpus
    if pattern is None:
        return [Path(fixed)] if Path(fixed).is_dir() else []
    if "**" in pattern or "/" in pattern:
        return [Path(fixed if fixed.endswith("/") else os.path.dirname(fixed) or ".")]
    return []


def _exporters(export) -> list:
    """[export] is one exporter, or sub-sections of exporters; plain files are always written."""
    from ..export.plain import PlainExporter
    if export is None:
        found = []
    elif hasattr(export, "export"):
        found = [export]
    elif isinstance(export, dict) and all(hasattr(e, "export") for e in export.values()):
        found = list(export.values())
    else:
        raise RecipeError("recipe [export]: expected @exporters = \"...\" or sub-sections "
                          "[export.NAME] each with @exporters")
    if not any(isinstance(e, PlainExporter) for e in found):
        found.insert(0, PlainExporter())
    return found


def _assert_finite(obj) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise DPVocabError("internal error: a non-finite number in privacy.json")
    if isinstance(obj, dict):
        for v in obj.values():
            _assert_finite(v)
    if isinstance(obj, list):
        for v in obj:
            _assert_finite(v)
