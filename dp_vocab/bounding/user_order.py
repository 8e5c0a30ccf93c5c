"""Keyed user order and per-user bounding seeds. Proof: mechanisms/README.md §1-2.

Each user gets four 64-bit words F_i(enc(uid)) = SipHash-2-4(k_i, enc(uid)), i = 0..3, with four
independent 128-bit SipHash keys derived from the run key K by one HMAC-SHA512. order := users
sorted by (F_0, F_1, F_2) (192 bits); seed_uid := F_3. A user's words depend only on (K, its
id), never on which other users are present or on anyone's data: what the sensitivity proofs
need. Two distinct users tie on all 192 bits with probability ≤ n²·2⁻¹⁹³ under a secret key
(≈ 2⁻¹⁵³ for a million users); only then would the stable sort fall back on row order.

SipHash is a PRF designed for short inputs: evaluated in compiled code over one buffer of all
encoded ids, it costs nanoseconds per user where a Python HMAC call costs a microsecond.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
from numba import njit, prange

from ..errors import ParameterError
from ._kernels import _specialised


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


def encode_user_ids(user_ids: list) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 buffer, int64 offsets of n + 1): ``encode_user_id`` of every id, concatenated.
    All-string and all-integer lists (the usual cases) are encoded in a few C-level passes."""
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
        return buf, _byte_offsets(buf, offsets)
    parts = [encode_user_id(u) for u in user_ids]
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=n), out=offsets[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), offsets


class _NotShown:
    """What an error says of a secret value in place of the value: its kind and length."""

    def __init__(self, value):
        size = f" of length {len(value)}" if isinstance(value, (str, bytes, bytearray)) else ""
        self.text = f"a {type(value).__name__}{size} (not shown: a key is secret)"

    def __repr__(self) -> str:
        return self.text


@njit(cache=True, nogil=True)
def _byte_offsets(buf, offsets):
    """The UTF-8 byte offsets in ``buf`` of the code-point offsets ``offsets`` (ascending):
    one walk over the bytes, counting the bytes that start a code point (not 10xxxxxx)."""
    out = np.empty(offsets.size, dtype=np.int64)
    b = 0
    cp = 0
    for k in range(offsets.size):
        while cp < offsets[k]:
            b += 1
            while b < buf.size and (buf[b] & 0xC0) == 0x80:
                b += 1
            cp += 1
        out[k] = b
    return out


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


_C0 = np.uint64(0x736F6D6570736575)
_C1 = np.uint64(0x646F72616E646F6D)
_C2 = np.uint64(0x6C7967656E657261)
_C3 = np.uint64(0x7465646279746573)
_FF = np.uint64(0xFF)


_R13, _R16, _R17, _R21, _R32 = (np.uint64(b) for b in (13, 16, 17, 21, 32))
_W = np.uint64(64)


@njit(cache=True)
def _rotl(x, b):
    """Rotate left; ``b`` a uint64 constant, so one compiled version serves every call."""
    return (x << b) | (x >> (_W - b))


@njit(cache=True)
def _sipround(v0, v1, v2, v3):
    v0 += v1
    v1 = _rotl(v1, _R13) ^ v0
    v0 = _rotl(v0, _R32)
    v2 += v3
    v3 = _rotl(v3, _R16) ^ v2
    v0 += v3
    v3 = _rotl(v3, _R21) ^ v0
    v2 += v1
    v1 = _rotl(v1, _R17) ^ v2
    v2 = _rotl(v2, _R32)
    return v0, v1, v2, v3


@njit(cache=True)
def siphash24(k0, k1, buf, start, end):
    """SipHash-2-4 (Aumasson & Bernstein 2012) of ``buf[start:end]`` under key (k0, k1)."""
    v0 = k0 ^ _C0
    v1 = k1 ^ _C1
    v2 = k0 ^ _C2
    v3 = k1 ^ _C3
    n = end - start
    full = start + (n // 8) * 8
    for p in range(start, full, 8):
        m = np.uint64(0)
        for j in range(8):
            m |= np.uint64(buf[p + j]) << np.uint64(8 * j)
        v3 ^= m
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        v0 ^= m
    m = np.uint64(n & 0xFF) << np.uint64(56)
    for j in range(end - full):
        m |= np.uint64(buf[full + j]) << np.uint64(8 * j)
    v3 ^= m
    v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    v0 ^= m
    v2 ^= _FF
    for _ in range(4):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


@njit(cache=True, inline="always")
def _siprounds_x4(rounds, a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3):
    """``rounds`` SipRounds of four independent states, interleaved (inlined where called, so
    that the constant ``rounds`` unrolls)."""
    for _ in range(rounds):
        a0, a1, a2, a3 = _sipround(a0, a1, a2, a3)
        b0, b1, b2, b3 = _sipround(b0, b1, b2, b3)
        c0, c1, c2, c3 = _sipround(c0, c1, c2, c3)
        d0, d1, d2, d3 = _sipround(d0, d1, d2, d3)
    return a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3


@njit(cache=True)
def _siphash24_x4(keys, buf, start, end):
    """``siphash24`` of ``buf[start:end]`` under each of the four keys ``keys`` (4, 2), in
    lockstep: the message words are read once, and the four independent chains of additions
    and rotations overlap in the CPU (SipHash alone is one long dependency chain)."""
    a0, a1, a2, a3 = keys[0, 0] ^ _C0, keys[0, 1] ^ _C1, keys[0, 0] ^ _C2, keys[0, 1] ^ _C3
    b0, b1, b2, b3 = keys[1, 0] ^ _C0, keys[1, 1] ^ _C1, keys[1, 0] ^ _C2, keys[1, 1] ^ _C3
    c0, c1, c2, c3 = keys[2, 0] ^ _C0, keys[2, 1] ^ _C1, keys[2, 0] ^ _C2, keys[2, 1] ^ _C3
    d0, d1, d2, d3 = keys[3, 0] ^ _C0, keys[3, 1] ^ _C1, keys[3, 0] ^ _C2, keys[3, 1] ^ _C3
    n = end - start
    full = start + (n // 8) * 8
    p = start
    while True:
        if p < full:
            m = np.uint64(0)
            for j in range(8):
                m |= np.uint64(buf[p + j]) << np.uint64(8 * j)
        else:   # the last block: the remaining bytes and the length
            m = np.uint64(n & 0xFF) << np.uint64(56)
            for j in range(end - full):
                m |= np.uint64(buf[full + j]) << np.uint64(8 * j)
        a3 ^= m
        b3 ^= m
        c3 ^= m
        d3 ^= m
        a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3 = _siprounds_x4(
            2, a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3)
        a0 ^= m
        b0 ^= m
        c0 ^= m
        d0 ^= m
        if p >= full:
            break
        p += 8
    a2 ^= _FF
    b2 ^= _FF
    c2 ^= _FF
    d2 ^= _FF
    a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3 = _siprounds_x4(
        4, a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3)
    return a0 ^ a1 ^ a2 ^ a3, b0 ^ b1 ^ b2 ^ b3, c0 ^ c1 ^ c2 ^ c3, d0 ^ d1 ^ d2 ^ d3


def _prf_words_of(buf, offsets, keys):
    """One row of the four PRF words per id (``keys``: the (4, 2) SipHash keys), ~70 ns an id."""
    n = offsets.size - 1
    out = np.empty((n, 4), dtype=np.uint64)
    n_chunks = min(n, 64)
    for c in prange(n_chunks):
        for r in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            a, b, d, e = _siphash24_x4(keys, buf, offsets[r], offsets[r + 1])
            out[r, 0] = a
            out[r, 1] = b
            out[r, 2] = d
            out[r, 3] = e
    return out


_prf_words_serial = njit(cache=True)(_prf_words_of)
_prf_words_threaded = njit(cache=True, parallel=True)(_specialised(_prf_words_of, "_threads"))
# users: below this one thread takes under ~15 ms (the bundled sample, 4k users, never pays
# the threaded build's first compile, ~1 s once); pypi's 842k users: ~70 ms on one thread,
# ~40 ms on two
_PARALLEL_FROM = 1 << 18


def _prf_words(buf, offsets, keys):
    run = _prf_words_threaded if offsets.size > _PARALLEL_FROM else _prf_words_serial
    return run(buf, offsets, keys)


def user_keys(user_ids: list, key: bytes, encoded: tuple[np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 order words, shape (n, 3): the 192-bit order key per row; uint64 bounding seed
    per row). Users from different places (Dask partitions) merge by these words. ``encoded``:
    ``encode_user_ids(user_ids)``, when the caller has it already."""
    key = check_key(key)
    if len(user_ids) == 0:
        return np.zeros((0, 3), np.uint64), np.zeros(0, np.uint64)
    buf, offsets = encoded if encoded is not None else encode_user_ids(user_ids)
    words = _prf_words(buf, offsets, siphash_keys(key))
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
