"""SipHash-2-4 in compiled code (numba): the PRF of the user order and the item hashes
(``user_order`` documents both), and the UTF-8 offsets of encoded ids. Imported on first use
(``compiled.lazy_module``)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._kernels import _specialised


@njit(cache=True, nogil=True)
def byte_offsets(buf, offsets):
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
        a3, b3, c3, d3 = a3 ^ m, b3 ^ m, c3 ^ m, d3 ^ m
        a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3 = _siprounds_x4(
            2, a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3)
        a0, b0, c0, d0 = a0 ^ m, b0 ^ m, c0 ^ m, d0 ^ m
        if p >= full:
            break
        p += 8
    a2, b2, c2, d2 = a2 ^ _FF, b2 ^ _FF, c2 ^ _FF, d2 ^ _FF
    a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3 = _siprounds_x4(
        4, a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3)
    return a0 ^ a1 ^ a2 ^ a3, b0 ^ b1 ^ b2 ^ b3, c0 ^ c1 ^ c2 ^ c3, d0 ^ d1 ^ d2 ^ d3


def _prf_words_of(buf, offsets, keys):
    """One row of the four PRF words per id (``keys``: the (4, 2) SipHash keys)."""
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
# users: below this one thread is quick and the threaded build's first compile would cost more
# than threads save (the bundled sample stays serial); far above it, threads pay off
_PARALLEL_FROM = 1 << 18


def prf_words(buf, offsets, keys):
    """(n, 4) uint64: the four PRF words of each encoded id (``user_order.user_keys``)."""
    run = _prf_words_threaded if offsets.size > _PARALLEL_FROM else _prf_words_serial
    return run(buf, offsets, keys)
