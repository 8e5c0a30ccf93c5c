"""Streaming corpus readers yielding ``(user_id, text)``."""

from .readers import CsvReader, JsonlReader, TextDirReader
from .tables import ArrowReader, FrameReader, ParquetReader

__all__ = ["ArrowReader", "CsvReader", "FrameReader", "JsonlReader", "ParquetReader",
           "TextDirReader"]
