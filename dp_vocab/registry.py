"""Every registered function, in one place, under versioned names (``NAMESPACE.NAME.vN``;
dp-vocab's own are ``dp_vocab.NAME.vN``).

Recipes refer to these with ``@readers``, ``@tokenizers``, ``@extractors``, ``@mechanisms``,
``@counts`` and ``@exporters``; other packages add their own through the ``dp_vocab_*`` entry
points (``dp_vocab_mechanisms``, ...) or ``registry.<table>.register`` at run time. A mechanism
is named by its registered name, or by its short name for the newest registered version.
"""

from __future__ import annotations

import inspect
import re

import catalogue
import confection

from .errors import DPVocabError, ParameterError


class registry(confection.registry):
    readers = catalogue.create("dp_vocab", "readers", entry_points=True)
    tokenizers = catalogue.create("dp_vocab", "tokenizers", entry_points=True)
    extractors = catalogue.create("dp_vocab", "extractors", entry_points=True)
    mechanisms = catalogue.create("dp_vocab", "mechanisms", entry_points=True)
    exporters = catalogue.create("dp_vocab", "exporters", entry_points=True)
    counts = catalogue.create("dp_vocab", "counts", entry_points=True)


# ---- readers ----------------------------------------------------------------------------------

@registry.readers("dp_vocab.jsonl.v1")
def jsonl_reader(path: str, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", max_line_bytes: int = 16 * 2 ** 20):
    from .ingest.corpora import JsonlReader
    return JsonlReader(path, user_field=user_field, text_field=text_field, on_error=on_error,
                       max_line_bytes=max_line_bytes)


@registry.readers("dp_vocab.csv.v1")
def csv_reader(path: str, user_field: str = "user", text_field: str = "text",
               delimiter: str = ",", on_error: str = "raise", max_line_bytes: int = 16 * 2 ** 20):
    from .ingest.corpora import CsvReader
    return CsvReader(path, user_field=user_field, text_field=text_field, delimiter=delimiter,
                     on_error=on_error, max_line_bytes=max_line_bytes)


@registry.readers("dp_vocab.text_folder.v1")
def text_folder_reader(path: str, pattern: str = "*.txt", user_per: str = "file",
                       on_error: str = "raise", max_file_bytes: int = 64 * 2 ** 20):
    from .ingest.corpora import TextDirReader
    return TextDirReader(path, pattern=pattern, user_per=user_per, on_error=on_error,
                         max_file_bytes=max_file_bytes)


@registry.readers("dp_vocab.parquet.v1")
def parquet_reader(path: str, user_field: str = "user", text_field: str = "text",
                   on_error: str = "raise", batch_rows: int = 65_536):
    from .ingest.corpora import ParquetReader
    return ParquetReader(path, user_field=user_field, text_field=text_field, on_error=on_error,
                         batch_rows=batch_rows)


@registry.readers("dp_vocab.arrow.v1")
def arrow_reader(path: str, user_field: str = "user", text_field: str = "text",
                 on_error: str = "raise", batch_rows: int = 65_536):
    from .ingest.corpora import ArrowReader
    return ArrowReader(path, user_field=user_field, text_field=text_field, on_error=on_error,
                       batch_rows=batch_rows)


# ---- tokenizers -------------------------------------------------------------------------------

@registry.tokenizers("dp_vocab.regex.v1")
def regex_tokenizer(pattern: str = r"\w+(?:['’]\w+)*|[^\w\s]"):
    from .ingest.text.tokenizers import RegexTokenizer
    return RegexTokenizer(pattern)


@registry.tokenizers("dp_vocab.spacy.v1")
def spacy_tokenizer(lang: str = "en"):
    from .ingest.text.tokenizers import SpacyTokenizer
    return SpacyTokenizer(lang)


@registry.tokenizers("dp_vocab.hf_pre_tokenizer.v1")
def hf_pre_tokenizer(kind: str = "whitespace"):
    from .ingest.text.tokenizers import HFPreTokenizer
    return HFPreTokenizer(kind)


@registry.tokenizers("dp_vocab.hf_tokenizer_pipeline.v1")
def hf_tokenizer_pipeline(path: str):
    """An existing tokenizer's normaliser and pre-tokenizer (tokenizer.json or its folder)."""
    from .ingest.text.pipeline import PipelineTokenizer
    return PipelineTokenizer(path)


# ---- extractors -------------------------------------------------------------------------------

@registry.extractors("dp_vocab.items.v1")
def item_extractor(tokenizer, n_min: int = 1, n_max: int = 1, lowercase: bool = True,
                   nfkc: bool = True, max_length: int = 50, joiner: str = " ",
                   max_distinct_per_user: int = 100_000):
    from .ingest.text.items import ItemExtractor
    return ItemExtractor(tokenizer, n_min=n_min, n_max=n_max, lowercase=lowercase, nfkc=nfkc,
                         max_length=max_length, joiner=joiner,
                         max_distinct_per_user=max_distinct_per_user)


# ---- mechanisms -------------------------------------------------------------------------------

def _register_mechanisms() -> None:
    from .mechanisms import MECHANISMS
    for cls in MECHANISMS.values():
        registry.mechanisms.register(f"{cls.namespace}.{cls.name}.v{cls.version}", func=cls)


_register_mechanisms()

# a registered name: NAMESPACE.NAME.vN (the namespace may hold dots: "acme.text.gw.v2")
_VERSIONED = re.compile(r"(?P<namespace>.+)\.(?P<short>[^.]+)\.v(?P<version>[0-9]+)")


def _name_parts(full: str) -> tuple[str, str, int]:
    """(namespace, short name, version) of a registered name; a name not of the form
    NAMESPACE.NAME.vN is its own short name."""
    m = _VERSIONED.fullmatch(full)
    return (m["namespace"], m["short"], int(m["version"])) if m else ("", full, 0)


def registered_mechanisms() -> dict:
    """Every registered mechanism by its registered name: dp-vocab's, those other installed
    packages declare as ``dp_vocab_mechanisms`` entry points, and those added at run time with
    ``registry.mechanisms.register``."""
    try:
        return registry.mechanisms.get_all()
    except Exception as e:  # noqa: BLE001 - an installed package's entry point fails to import
        raise DPVocabError(f"mechanisms: an installed package's dp_vocab_mechanisms entry point "
                           f"failed to load ({type(e).__name__}: {e}). Fix or uninstall that "
                           f"package, or give the mechanism's full registered name "
                           f"(dp_vocab.NAME.vN) so that only that one is loaded.") from None


def short_names(registered) -> dict[str, str]:
    """Short name → the registered name it stands for, among ``registered`` names: the newest
    version of that name, when a single namespace registers it (two packages' "gw" must be
    named in full)."""
    newest: dict[str, str] = {}
    namespaces: dict[str, set[str]] = {}
    for full in registered:
        namespace, short, version = _name_parts(full)
        namespaces.setdefault(short, set()).add(namespace)
        if short not in newest or version > _name_parts(newest[short])[2]:
            newest[short] = full
    return {short: full for short, full in newest.items() if len(namespaces[short]) == 1}


def _named_mechanisms() -> list[tuple[str, str, type]]:
    """(the name to give, registered name, class) of every registered mechanism, sorted by
    registered name; the name to give is the short name where it stands for that
    registration, else the registered name (an older version, or a name two packages use)."""
    registered = registered_mechanisms()
    short_of = {full: short for short, full in short_names(registered).items()}
    return [(short_of.get(full, full), full, registered[full]) for full in sorted(registered)]


def resolve_mechanism_name(name: str) -> str:
    """The registered name ``name`` stands for: itself when registered
    (``"dp_vocab.gw.v1"``), else the newest registered version of the short name (``"gw"``)."""
    if not isinstance(name, str):
        raise ParameterError("mechanism", name, "a mechanism name such as 'policy_gaussian'")
    if name in registry.mechanisms:   # loads no other package's entry point
        return name
    registered = registered_mechanisms()
    full = short_names(registered).get(name)
    if full is not None:
        return full
    same = sorted(f for f in registered if _name_parts(f)[1] == name)
    if same:
        raise ParameterError("mechanism", name, "one of the registered names: " + ", ".join(same),
                             f"Several packages register a mechanism {name!r}; give the one you "
                             f"mean in full.")
    known = ", ".join(n for n, _, _ in _named_mechanisms())
    raise ParameterError("mechanism", name, f"one of: {known}",
                         "Run `dp-vocab mechanisms` to list them with their parameters (a "
                         "mechanism of another package is listed once that package is installed).")


def mechanism_class(name: str):
    """The registered class (or factory) a mechanism name stands for."""
    return registry.mechanisms.get(resolve_mechanism_name(name))


def shortest_name(name: str) -> str:
    """The shortest name standing for the same registered mechanism as ``name``: its short
    name, unless that stands for another version or is registered by two packages."""
    full = resolve_mechanism_name(name)
    short = _name_parts(full)[1]
    return short if short_names(registered_mechanisms()).get(short) == full else full


def mechanism_names() -> list[str]:
    """The names ``make_mechanism`` takes, one per registered mechanism."""
    return [name for name, _, _ in _named_mechanisms()]


def check_registered_name(field: str, full: str, made) -> None:
    """What a mechanism or count release records (release, ledger, privacy.json) is its
    ``registry_name``: it must be the name it was made from, or the record names another."""
    recorded = getattr(made, "registry_name", None)
    if recorded != full:
        raise ParameterError(field, full, "a name registered for a class that records it (its "
                             "namespace.name.vN)", f"The class registered as {full!r} records "
                             f"{recorded!r}: set the class's namespace, name and version to "
                             f"match, or register it as {recorded!r}.")


def make_mechanism(name: str, **params):
    # the docstring is generated below, from the registry (_MAKE_MECHANISM_DOC)
    full = resolve_mechanism_name(name)
    cls = registry.mechanisms.get(full)
    sig = inspect.signature(cls)
    unknown = [k for k in params if k not in sig.parameters]
    if unknown:
        raise ParameterError(f"{name}.{unknown[0]}", params[unknown[0]],
                             "a parameter of this mechanism: " + ", ".join(sig.parameters))
    try:
        mechanism = cls(**params)
    except TypeError as e:  # a required parameter is missing
        raise ParameterError(name, params, f"its required parameters ({e})") from None
    check_registered_name("mechanism", full, mechanism)
    return mechanism


def mechanism_parameters(name: str) -> list[tuple[str, object]]:
    """(parameter, default or inspect.Parameter.empty) for a registered mechanism."""
    return _parameters(mechanism_class(name))


def _parameters(cls) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]


def mechanism_catalogue() -> list[tuple[str, str, str, str]]:
    """(short name, registry name, one-line summary, parameters with their defaults) of every
    registered mechanism, sorted: what `dp-vocab mechanisms` prints and make_mechanism's
    docstring lists."""
    out = []
    for short, full, cls in _named_mechanisms():
        params = ", ".join(p if d is inspect.Parameter.empty else f"{p}={d!r}"
                           for p, d in _parameters(cls))
        out.append((short, full, getattr(cls, "summary", ""), params))
    return out


_MAKE_MECHANISM_DOC = """Build a registered mechanism from its name and parameters.

    ``make_mechanism("policy_gaussian", epsilon=3, delta=1e-5, max_items_per_user=100)``

    Parameters
    ----------
    name : str
        A short name (``"count_laplace"``: its newest registered version) or a registered name
        (``"dp_vocab.count_laplace.v1"``, as in a recipe's ``@mechanisms``).
    **params
        The mechanism's parameters, listed below; ``epsilon`` (> 0) and ``delta`` (in (0, 0.5])
        are the guarantee, ``max_items_per_user`` is Δ0, the per-user cap. Parameters without a
        default are required.

    Returns
    -------
    Mechanism
        A frozen, validated mechanism: ``.release(itemsets)`` returns a ``Release``
        (fresh user-order key, OS randomness); ``.histogram(itemsets, key=...)`` the pre-noise
        weights for a fixed key; ``.threshold``, ``.noise_scale`` and ``.claim`` state its
        calibration and privacy claim.

    Raises
    ------
    ParameterError
        An unknown name or parameter, or a value outside its range (the message names the
        parameter, what is allowed and what was given).

    Registered mechanisms
    ---------------------
    dp-vocab's and those of other installed packages (``dp_vocab_mechanisms`` entry points),
    as registered when dp_vocab.registry was imported; ``dp-vocab mechanisms`` prints the
    current list.

"""


def _document_make_mechanism() -> None:
    try:
        listed = mechanism_catalogue()
    except DPVocabError as e:   # a broken plugin: make_mechanism and the CLI report it
        make_mechanism.__doc__ = _MAKE_MECHANISM_DOC + f"    (not listed: {e})\n"
        return
    # one bullet each: a list in help() and on the documentation site alike
    entries = "".join(f"    * ``{short}`` ({full}): {summary.rstrip('.')}.\n"
                      f"      Parameters: {params}\n"
                      for short, full, summary, params in listed)
    make_mechanism.__doc__ = _MAKE_MECHANISM_DOC + entries


_document_make_mechanism()


# ---- exporters --------------------------------------------------------------------------------

@registry.exporters("dp_vocab.plain.v1")
def plain_exporter(jsonl: bool = True):
    from .export.plain import PlainExporter
    return PlainExporter(jsonl=jsonl)


@registry.exporters("dp_vocab.hf_tokenizer.v1")
def hf_tokenizer_exporter(model: str | None = None, style: str | None = None,
                          special_tokens: list | None = None, vocab_size: int | None = None,
                          classic_files: bool = False, model_max_length: int | None = None,
                          public_prior: str | None = None, like: str | None = None):
    from .export.hf import HFTokenizerExporter
    return HFTokenizerExporter(model=model, style=style, special_tokens=special_tokens,
                               vocab_size=vocab_size, classic_files=classic_files,
                               model_max_length=model_max_length, public_prior=public_prior,
                               like=like)


@registry.exporters("dp_vocab.spacy.v1")
def spacy_exporter(lang: str = "en", pipeline: bool = True):
    from .export.spacy import SpacyExporter
    return SpacyExporter(lang=lang, pipeline=pipeline)


# ---- count releases over the released vocabulary ----------------------------------------------

@registry.counts("dp_vocab.discrete_laplace_counts.v1")
def discrete_laplace_counts(epsilon: float, max_items_per_user: int = 100, max_count: int = 5):
    from .mechanisms.count_release import DiscreteLaplaceCounts
    return DiscreteLaplaceCounts(epsilon, max_items_per_user=max_items_per_user,
                                 max_count=max_count)


@registry.counts("dp_vocab.discrete_gaussian_counts.v1")
def discrete_gaussian_counts(epsilon: float, delta: float, max_items_per_user: int = 100,
                             max_count: int = 5):
    from .mechanisms.count_release import DiscreteGaussianCounts
    return DiscreteGaussianCounts(epsilon, delta, max_items_per_user=max_items_per_user,
                                  max_count=max_count)


@registry.counts("dp_vocab.normalised_gaussian_counts.v1")
def normalised_gaussian_counts(epsilon: float, delta: float, max_items_per_user: int = 1000,
                               max_count: int = 1, scale: int = 100):
    from .mechanisms.count_release import NormalisedGaussianCounts
    return NormalisedGaussianCounts(epsilon, delta, max_items_per_user, max_count, scale)
