"""dp-vocab: vocabularies and n-gram sets from user text with user-level differential privacy."""

from .version import __version__

from .errors import (BudgetExceededError, CorpusError, DPVocabError,  # noqa: E402
                     ExportNoteWarning, OutputError, ParameterError, RecipeError,
                     SkippedDocumentsWarning)
from .data.itemsets import ItemSets, Vocabulary  # noqa: E402
from .data.release import Release  # noqa: E402


def __getattr__(name: str):
    """``make_mechanism``, ``run_recipe``, ``evaluate`` and ``itemsets_from_frame`` are
    imported on first use (they bring the registry, confection, rich and polars) and are the
    functions themselves, so that ``help(dp_vocab.run_recipe)`` shows their parameters and
    ``help(dp_vocab.make_mechanism)`` the registered mechanisms."""
    if name == "make_mechanism":
        from .registry import make_mechanism
        return make_mechanism
    if name == "run_recipe":
        from .recipes import run_recipe
        return run_recipe
    if name == "evaluate":
        from .research.evaluation import evaluate
        return evaluate
    if name == "itemsets_from_frame":
        from .ingest.extract import itemsets_from_frame
        return itemsets_from_frame
    raise AttributeError(f"module 'dp_vocab' has no attribute {name!r}")


__all__ = ["BudgetExceededError", "CorpusError", "DPVocabError", "ExportNoteWarning", "ItemSets",
           "OutputError", "ParameterError", "RecipeError", "Release", "SkippedDocumentsWarning",
           "Vocabulary", "__version__", "evaluate", "itemsets_from_frame", "make_mechanism",
           "run_recipe"]
