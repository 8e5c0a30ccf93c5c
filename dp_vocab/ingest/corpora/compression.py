"""What a damaged compressed stream raises, and how to describe it without its bytes."""

from __future__ import annotations

import gzip
import lzma
import zlib

from ...errors import CorpusError

# what a damaged compressed stream raises (gzip: BadGzipFile/EOFError/zlib.error)
_DECOMPRESS_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def _decompress_reason(e: BaseException) -> str:
    """What is wrong, by kind only: the library's own text can quote the file's bytes."""
    if isinstance(e, EOFError):
        return "it ends early: truncated"
    if isinstance(e, gzip.BadGzipFile):
        return "not a valid gzip stream (wrong header or checksum)"
    if isinstance(e, zlib.error):
        return "invalid deflate data"
    if isinstance(e, lzma.LZMAError):
        return "invalid xz/lzma data"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return f"{type(e).__name__}: invalid compressed data"


def corrupt_stream(path, e: BaseException, where: str = ""):
    """The error for a compressed stream that fails to decompress: what is wrong (by kind),
    where if known ("after line N", "before its first line could be read"), and the fix."""
    where = f" {where}" if where else ""
    return CorpusError(f"the compressed stream is corrupt or unreadable{where} "
                       f"({_decompress_reason(e)}). Re-create or re-download the file "
                       f"(gzip -t / xz -t checks it)", path=path)
