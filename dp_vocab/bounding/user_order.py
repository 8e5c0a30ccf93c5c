"""Keyed-hash user order and per-user bounding seeds. Proof: mechanisms/README.md §1-2.

order := users sorted by HMAC-SHA256(K, enc(uid)); seed_uid := the last 8 bytes of that digest.
The relative order of two users and each user's seed depend only on (K, their ids), never on
which other users are present or on anyone's data: what the sensitivity proofs need.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

from ..errors import ParameterError


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


def check_key(key) -> bytes:
    if isinstance(key, str):
        try:
            key = bytes.fromhex(key)
        except ValueError:
            raise ParameterError("key", key, "32+ bytes, or their hex string") from None
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise ParameterError("key", key, "at least 16 bytes (a fresh random 32-byte key is the default)")
    return bytes(key)


def derive_key(key: bytes, label: bytes) -> bytes:
    """An independent-looking 32-byte key for one stage (a DPNE level, a DP-SIPS round)."""
    return hashlib.blake2b(key + label, digest_size=32).digest()


def user_keys(user_ids: list, key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 order words, shape (n, 3): the 192-bit order key per row; uint64 bounding seed
    per row). Users from different places (Dask partitions) merge by these words."""
    key = check_key(key)
    n = len(user_ids)
    if n == 0:
        return np.zeros((0, 3), np.uint64), np.zeros(0, np.uint64)
    digest = hmac.digest
    buf = b"".join(digest(key, encode_user_id(u), "sha256") for u in user_ids)
    words = np.frombuffer(buf, dtype=">u8").reshape(n, 4).astype(np.uint64)
    return words[:, :3], words[:, 3].copy()


def keyed_order(words: np.ndarray) -> np.ndarray:
    """Row indices sorted by their 192-bit order words (a tie has probability ~2^-192; then the
    stable sort keeps row order)."""
    return np.lexsort((words[:, 2], words[:, 1], words[:, 0])).astype(np.int64)


def user_order(user_ids: list, key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(processing order as row indices, uint64 bounding seed per row)."""
    words, seeds = user_keys(user_ids, key)
    return keyed_order(words), seeds
