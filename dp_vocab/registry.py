"""Every registered function, in one place, under versioned names (``dp_vocab.NAME.vN``).

Recipes refer to these with ``@readers``, ``@tokenizers``, ``@extractors``, ``@mechanisms`` and
``@exporters``; plugins may add their own through the ``dp_vocab_*`` entry points.
"""

from __future__ import annotations

import inspect

import catalogue
import confection

from .errors import ParameterError


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
    for short, cls in MECHANISMS.items():
        registry.mechanisms.register(f"dp_vocab.{short}.v{cls.version}", func=cls)


_register_mechanisms()


def resolve_mechanism_name(name: str) -> str:
    if not isinstance(name, str):
        raise ParameterError("mechanism", name, "a mechanism name such as 'policy_gaussian'")
    full = name if name.startswith("dp_vocab.") else f"dp_vocab.{name}.v1"
    if full not in registry.mechanisms.get_all():
        known = ", ".join(sorted(mechanism_names()))
        raise ParameterError("mechanism", name, f"one of: {known}",
                             "Run `dp-vocab mechanisms` to list them with their parameters.")
    return full


def mechanism_names() -> list[str]:
    return [n.split(".")[1] for n in registry.mechanisms.get_all()]


def make_mechanism(name: str, **params):
    # the docstring is generated below, from the registry (_MAKE_MECHANISM_DOC)
    cls = registry.mechanisms.get(resolve_mechanism_name(name))
    sig = inspect.signature(cls.__init__)
    unknown = [k for k in params if k not in sig.parameters]
    if unknown:
        allowed = [p for p in sig.parameters if p != "self"]
        raise ParameterError(f"{name}.{unknown[0]}", params[unknown[0]],
                             "a parameter of this mechanism: " + ", ".join(allowed))
    try:
        return cls(**params)
    except TypeError as e:  # a required parameter is missing
        raise ParameterError(name, params, f"its required parameters ({e})") from None


def mechanism_parameters(name: str) -> list[tuple[str, object]]:
    """(parameter, default or inspect.Parameter.empty) for a registered mechanism."""
    cls = registry.mechanisms.get(resolve_mechanism_name(name))
    return [(p.name, p.default) for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self"]


def mechanism_catalogue() -> list[tuple[str, str, str, str]]:
    """(short name, registry name, one-line summary, parameters with their defaults) of every
    registered mechanism, sorted: what `dp-vocab mechanisms` prints and make_mechanism's
    docstring lists."""
    out = []
    for full in sorted(registry.mechanisms.get_all()):
        short = full.split(".")[1] if full.count(".") == 2 else full
        cls = registry.mechanisms.get(full)
        params = ", ".join(p if d is inspect.Parameter.empty else f"{p}={d!r}"
                           for p, d in mechanism_parameters(full))
        out.append((short, full, getattr(cls, "summary", ""), params))
    return out


_MAKE_MECHANISM_DOC = """Build a registered mechanism from its name and parameters.

    ``make_mechanism("policy_gaussian", epsilon=3, delta=1e-5, max_items_per_user=100)``

    Parameters
    ----------
    name : str
        A short name (``"count_laplace"``) or a registry name (``"dp_vocab.count_laplace.v1"``),
        as in a recipe's ``@mechanisms``.
    **params
        The mechanism's parameters, listed below; ``epsilon`` (> 0) and ``delta`` (in (0, 0.5])
        are the guarantee, ``max_items_per_user`` is Δ0, the per-user cap. Parameters without a
        default are required.

    Returns
    -------
    Mechanism
        A frozen, validated mechanism: ``.release(itemsets)`` returns a :class:`Release`
        (fresh user-order key, OS randomness); ``.histogram(itemsets, key=...)`` the pre-noise
        weights for a fixed key; ``.threshold``, ``.noise_scale`` and ``.claim`` state its
        calibration and privacy claim.

    Raises
    ------
    ParameterError
        An unknown name or parameter, or a value outside its range (the message names the
        parameter, what is allowed and what was given).

    Registered mechanisms (``dp-vocab mechanisms`` prints the same list)
    ---------------------------------------------------------------------
"""


def _document_make_mechanism() -> None:
    entries = "".join(f"    ``{short}`` ({full})\n        {summary}\n"
                      f"        Parameters: {params}\n"
                      for short, full, summary, params in mechanism_catalogue())
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
