"""Streaming corpus readers yielding ``(user_id, text)``."""

from .readers import CsvReader, JsonlReader, TextDirReader

__all__ = ["CsvReader", "JsonlReader", "TextDirReader"]
