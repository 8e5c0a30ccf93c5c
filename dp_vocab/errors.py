"""Exceptions raised for user-facing problems.

Every message names the field, what was expected, what was received and, where
there is one, the fix. The CLI prints these without a traceback.
"""

from __future__ import annotations


class DPVocabError(Exception):
    """Base class of every error dp-vocab raises on purpose."""


# what an ``allowed`` text starts with when a string value is of the wrong type
_NON_STRING = ("a real number", "a finite real number", "an integer", "a number", "a share",
               "true or false", "null (OS randomness) or an integer")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class ParameterError(DPVocabError, ValueError):
    """A parameter is outside its allowed range."""

    def __init__(self, name: str, value: object, allowed: str, fix: str | None = None):
        self.name, self.value, self.allowed, self.fix = name, value, allowed, fix
        if isinstance(value, bool) and "." in name:   # a recipe field: as recipes write it
            msg = f"{name}: expected {allowed}, got {str(value).lower()}."
            if value:   # most often a bare --section.key flag
                msg += (f" (On the command line, --{name} with no value after it means true: "
                        f"give the value, e.g. --{name} VALUE.)")
        elif isinstance(value, str) and allowed.startswith(_NON_STRING):
            # the type is the mistake: say so ("3" in quotes is text, not a number)
            msg = f"{name}: expected {allowed}, got a string, {value!r}."
            if _is_number(value):   # the quotes are the mistake, whatever else applies
                fix = (f"Write the number without quotes ({name.rsplit('.', 1)[-1]} = "
                       f"{value.strip()} in a recipe; a number, not a str, from Python).")
        else:
            msg = f"{name}: expected {allowed}, got {_shown(value)}."
        if fix:
            msg += f" {fix}"
        super().__init__(msg)


def _shown(value: object, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters (a parameter may be a giant list)."""
    try:
        text = repr(value)
    except ValueError:   # an int beyond Python's digit limit for str()
        return f"an integer of {value.bit_length():,} bits" if isinstance(value, int) \
            else f"a {type(value).__name__}"
    if len(text) <= limit:
        return text
    size = f" of {len(value):,} items" if hasattr(value, "__len__") else ""
    return f"{text[:limit]}… (a {type(value).__name__}{size})"


class BudgetExceededError(DPVocabError):
    """The stages of a run would spend more than the declared privacy budget."""


class RecipeError(DPVocabError):
    """A recipe (.cfg) is malformed or names something that is not registered."""


class CorpusError(DPVocabError):
    """The input corpus cannot be read as configured.

    ``path``, ``line`` and ``field`` locate the problem. An in-memory table (``path`` such as
    ``<DataFrame>``) has no lines: its row is named by position, not by index label.
    """

    def __init__(self, message: str, path: object = None, line: int | None = None,
                 field: str | None = None):
        self.path, self.line, self.field = path, line, field
        where = ""
        if path is not None:
            where = str(path)
            if line is not None and where.startswith("<"):
                where += f", row {line} (by position, from 1)"
            elif line is not None:
                where += f":{line}"
            where += ": "
        if field is not None:
            message = f"field {field!r}: {message}"
        super().__init__(where + message)


class OutputError(DPVocabError):
    """The output location cannot be written as asked."""


class ExportNoteWarning(UserWarning):
    """An export differs from what the recipe asked (a tokenizer smaller or larger than
    ``vocab_size``, say): the note is also in ``RunResult.notes`` and ``privacy.json``."""


class SkippedDocumentsWarning(UserWarning):
    """``itemsets_from_frame`` skipped rows (empty documents, and bad rows with
    ``on_error = "skip"``): a NON-PRIVATE count of the input for its owner, as the command
    line's diagnostic; it names rows, never their text."""
