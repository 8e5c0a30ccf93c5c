"""Keyed user order and per-user bounding seeds. Proof: mechanisms/README.md §1-2.

Each user gets four 64-bit words F_i(enc(uid)) = SipHash-2-4(k_i, enc(uid)), i = 0..3, with four
independent 128-bit SipHash keys derived from the run key K by one HMAC-SHA512. order := users
sorted by (F_0, F_1, F_2) (192 bits); seed_uid := F_3. A user's words depend only on (K, its
id), never on which other users are present or on anyone's data: what the sensitivity proofs
need. Two distinct users tie on all 192 bits with probability ≤ n²·2⁻¹⁹³ under a secret key
(≈ 2⁻¹⁵³ for a million users); only then would the stable sort fall back on row order.

SipHash is a PRF designed for short inputs: evaluated in compiled code over one buffer of all
encoded ids, it avoids a Python HMAC call per user.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

from ..compiled import lazy_module
from ..errors import ParameterError

_siphash = lazy_module("dp_vocab.bounding._siphash")   # numba: imported on first use


def encode_user_id(uid) -> bytes:
    """Injective, type-tagged encoding: the string "1" and the integer 1 differ."""
    if isinstance(uid, str):
        return b"s:" + uid.encode("utf-8", "surrogatepass")
    if isinstance(uid, bool):
        raise TypeError(f"user id must be str, int or bytes, got bool {uid!r}")
    if isinstance(uid, int):
        return b"i:" + str(uid).encode("ascii")
    if isinstance(uid, bytes):
        return b"b:" + uid
    raise TypeError(f"user id must be str, int or bytes, got {type(uid).__name__}")


def encode_user_ids(user_ids) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 buffer, int64 offsets of n + 1): ``encode_user_id`` of every id, concatenated.
    ``user_ids``: a list, or a polars String or Int64 column without nulls (encoded in polars,
    no Python object per id). All-string and all-integer lists (the usual cases) are encoded in
    a few C-level passes."""
    if type(user_ids).__module__.startswith("polars"):
        return _encode_column(user_ids)
    n = len(user_ids)
    tag = None
    try:
        text = "s:" + "s:".join(user_ids)
        tag = "s"
    except TypeError:   # not all strings
        if all(type(u) is int for u in user_ids):
            user_ids = list(map(str, user_ids))
            text = "i:" + "i:".join(user_ids)
            tag = "i"
    offsets = np.zeros(n + 1, dtype=np.int64)
    if tag is not None and n:
        np.cumsum(np.fromiter(map(len, user_ids), dtype=np.int64, count=n) + 2, out=offsets[1:])
        if text.isascii():
            return np.frombuffer(text.encode("ascii"), dtype=np.uint8), offsets
        buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        return buf, _siphash.byte_offsets(buf, offsets)
    parts = [encode_user_id(u) for u in user_ids]
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=n), out=offsets[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), offsets


def _encode_column(column) -> tuple[np.ndarray, np.ndarray]:
    import polars as pl
    if column.dtype not in (pl.String, pl.Int64) or column.null_count():
        return encode_user_ids(column.to_list())
    tag = "i:" if column.dtype == pl.Int64 else "s:"
    strings = column.cast(pl.String) if column.dtype == pl.Int64 else column
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    if not len(strings):
        return np.zeros(0, dtype=np.uint8), offsets
    np.cumsum(strings.str.len_bytes().cast(pl.Int64).to_numpy() + 2, out=offsets[1:])
    # polars strings are valid UTF-8: Python's encoding of them gives the same bytes
    text = tag + strings.str.join(tag).item()
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8), offsets


class _NotShown:
    """What an error says of a secret value in place of the value: its kind and length."""

    def __init__(self, value):
        size = f" of length {len(value)}" if isinstance(value, (str, bytes, bytearray)) else ""
        self.text = f"a {type(value).__name__}{size} (not shown: a key is secret)"

    def __repr__(self) -> str:
        return self.text


def check_key(key) -> bytes:
    """The run key as bytes; its errors never quote it (a key decides the user order)."""
    if isinstance(key, str):
        try:
            key = bytes.fromhex(key)
        except ValueError:
            raise ParameterError("key", _NotShown(key), "32+ bytes, or their hex string") \
                from None
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise ParameterError("key", _NotShown(key),
                             "at least 16 bytes (a fresh random 32-byte key is the default)")
    return bytes(key)


def derive_key(key: bytes, label: bytes) -> bytes:
    """An independent-looking 32-byte key for one stage (a DPNE level, a DP-SIPS round)."""
    return hashlib.blake2b(key + label, digest_size=32).digest()


_ORDER_LABEL = b"dp-vocab user order: four SipHash-2-4 keys"


def siphash_keys(key: bytes) -> np.ndarray:
    """(4, 2) uint64: four 128-bit SipHash keys (k0, k1 as little-endian words) from the run key."""
    okm = hmac.digest(key, _ORDER_LABEL, "sha512")
    return np.frombuffer(okm, dtype="<u8").astype(np.uint64).reshape(4, 2)


def user_keys(user_ids: list, key: bytes, encoded: tuple[np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 order words, shape (n, 3): the 192-bit order key per row; uint64 bounding seed
    per row). Users from different places (Dask partitions) merge by these words. ``encoded``:
    ``encode_user_ids(user_ids)``, when the caller has it already."""
    key = check_key(key)
    if len(user_ids) == 0:
        return np.zeros((0, 3), np.uint64), np.zeros(0, np.uint64)
    buf, offsets = encoded if encoded is not None else encode_user_ids(user_ids)
    words = _siphash.prf_words(buf, offsets, siphash_keys(key))
    return words[:, :3], words[:, 3].copy()


def fingerprints(values: list, key: bytes,
                 encoded: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """A 64-bit SipHash of each string or integer (type-tagged: "1" and 1 differ) under a fixed,
    public ``key``: a fast compiled hash where nothing is secret (``encoded`` as for
    ``user_keys``)."""
    return user_keys(values, key, encoded)[1]


def keyed_order(words: np.ndarray) -> np.ndarray:
    """Row indices sorted by their 192-bit order words: by the first word, and only when two
    rows share it (probability ~n²·2⁻⁶⁵) by all three (then a full tie keeps row order)."""
    order = np.argsort(words[:, 0])   # unstable, but only ever used on distinct words
    first = words[order, 0]
    if first.size > 1 and (first[1:] == first[:-1]).any():
        order = np.lexsort((words[:, 2], words[:, 1], words[:, 0]))
    return order.astype(np.int64)


def user_order(user_ids: list, key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(processing order as row indices, uint64 bounding seed per row)."""
    words, seeds = user_keys(user_ids, key)
    return keyed_order(words), seeds
