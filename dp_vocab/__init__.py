"""dp-vocab: vocabularies and n-gram sets from user text with user-level differential privacy."""

from .version import __version__

from .errors import (BudgetExceededError, CorpusError, DPVocabError, ParameterError,  # noqa: E402
                     RecipeError)
from .itemsets import ItemSets, Vocabulary  # noqa: E402
from .release import Release  # noqa: E402


def make_mechanism(name: str, **params):
    """Build a registered mechanism: ``make_mechanism("policy_gaussian", epsilon=3, delta=1e-5)``.

    ``name`` is a short name (``"count_laplace"``) or a registry name
    (``"dp_vocab.count_laplace.v1"``).
    """
    from .registry import make_mechanism as _make
    return _make(name, **params)


def run_recipe(*args, **kwargs):
    """Run a recipe from Python; see :func:`dp_vocab.recipes.run_recipe`."""
    from .recipes import run_recipe as _run
    return _run(*args, **kwargs)


def itemsets_from_frame(frame, user: str = "user", text: str = "text", extractor=None,
                        on_error: str = "raise") -> ItemSets:
    """Item sets from a pandas/polars DataFrame or a ``datasets.Dataset``; see
    :func:`dp_vocab.extraction.itemsets_from_frame`."""
    from .extraction import itemsets_from_frame as _from_frame
    return _from_frame(frame, user=user, text=text, extractor=extractor, on_error=on_error)


def evaluate(*args, **kwargs):
    """Compare mechanisms on one corpus; see :func:`dp_vocab.evaluate.evaluate`."""
    from .evaluate import evaluate as _evaluate
    return _evaluate(*args, **kwargs)


__all__ = ["BudgetExceededError", "CorpusError", "DPVocabError", "ItemSets", "ParameterError",
           "RecipeError", "Release", "Vocabulary", "__version__", "evaluate", "itemsets_from_frame",
           "make_mechanism", "run_recipe"]
