"""The compiled loops of DPNE's levels (numba), for ``sequences``: distinct values by a
bitmap, runs of sorted keys, candidate n-grams and their release marks. Imported on first use
(``compiled.lazy_module``)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def ones(x):
    """How many bits of the uint64 x are set (SWAR popcount)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def distinct_by_bitmap(values, span):
    """``sequences._sorted_distinct`` by a bitmap of [0, span): a value's index is the number of set
    bits below it (counts per word, then the bits of its own word)."""
    n_words = (span + 63) // 64
    words = np.zeros(n_words, dtype=np.uint64)
    for v in values:
        words[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    below = np.zeros(n_words + 1, dtype=np.int64)
    for w in range(n_words):
        below[w + 1] = below[w] + ones(words[w])
    distinct = np.empty(below[n_words], dtype=np.int64)
    for w in range(n_words):
        x = words[w]
        o = below[w]
        while x:
            low = x & (~x + np.uint64(1))   # the lowest set bit
            distinct[o] = w * 64 + ones(low - np.uint64(1))
            o += 1
            x ^= low
    ids = np.empty(values.size, dtype=np.int32)
    for i in range(values.size):
        v = values[i]
        mask = (np.uint64(1) << np.uint64(v & 63)) - np.uint64(1)
        ids[i] = below[v >> 6] + ones(words[v >> 6] & mask)
    return distinct, ids


@njit(cache=True, nogil=True)
def runs(packed, span):
    """The distinct values of sorted ``packed`` (user·span + key) split into (users, keys),
    and how many times each occurs: one pass to count them, one to fill."""
    n_out = 1 if packed.size else 0
    for i in range(1, packed.size):
        if packed[i] != packed[i - 1]:
            n_out += 1
    users = np.empty(n_out, dtype=np.int64)
    keys = np.empty(n_out, dtype=np.int64)
    counts = np.zeros(n_out, dtype=np.int64)
    o = -1
    for i in range(packed.size):
        if i == 0 or packed[i] != packed[i - 1]:
            o += 1
            users[o] = packed[i] // span
            keys[o] = packed[i] % span
        counts[o] += 1
    return users, keys, counts


@njit(cache=True, nogil=True)
def candidate_keys(s, room, n, m):
    """(positions i where the (n−1)-grams at i and i + 1 are both released and an n-gram fits
    before the sequence ends, the key s[i]·m + s[i + 1] of each): two passes, no masks."""
    count = 0
    for i in range(s.size - 1):
        if s[i] >= 0 and s[i + 1] >= 0 and room[i] >= n:
            count += 1
    pos = np.empty(count, dtype=np.int64)
    keys = np.empty(count, dtype=np.int64)
    o = 0
    for i in range(s.size - 1):
        if s[i] >= 0 and s[i + 1] >= 0 and room[i] >= n:
            pos[o] = i
            keys[o] = np.int64(s[i]) * m + s[i + 1]
            o += 1
    return pos, keys


@njit(cache=True, nogil=True)
def mark_released(pos, cand, m, starts, sorted_keys, order, s):
    """s[pos[i]] := the rank in S_n of the key cand[i] (a·m + b), if released; the released
    keys with prefix a are sorted_keys[starts[a]:starts[a + 1]] (ranks ``order``): a search
    among those, not among all released keys."""
    for i in range(cand.size):
        key = cand[i]
        a = key // m
        lo, hi = starts[a], starts[a + 1]
        while lo < hi:   # binary search among them: a frequent prefix may hold thousands
            mid = (lo + hi) // 2
            if sorted_keys[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < starts[a + 1] and sorted_keys[lo] == key:
            s[pos[i]] = order[lo]
