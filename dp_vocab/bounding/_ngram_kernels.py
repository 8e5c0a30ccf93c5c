"""The compiled loops of DPNE's levels (numba), for ``data.token_levels``: the candidate key at
a position, the distinct candidates of a level (a bitmap of the key span, or per-chunk keys),
each user's row of distinct candidates with counts, and the in-place marks of a released
level. Imported on first use (``compiled.lazy_module``).

A level-n candidate at position i of a sequence: the released (n−1)-grams at i and i + 1 (ids
a = s[i], b = s[i + 1] in S_{n−1}), key a·m + b (m = |S_{n−1}|); at level 1 the token id.
"""

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
def _key_at(s, tokens, i, n, m):
    """The candidate key at position i (its n-gram fits in the sequence), or −1."""
    if n == 1:
        return np.int64(tokens[i])
    a = s[i]
    b = s[i + 1]
    if a < 0 or b < 0:
        return np.int64(-1)
    return np.int64(a) * m + b


@njit(cache=True, nogil=True)
def mark_present(s, tokens, seq_ptr, n, m, words):
    """Set the bit of every candidate key held at some position (``words``: the bitmap)."""
    for j in range(seq_ptr.size - 1):
        for i in range(seq_ptr[j], seq_ptr[j + 1] - n + 1):
            key = _key_at(s, tokens, i, n, m)
            if key >= 0:
                words[key >> 6] |= np.uint64(1) << np.uint64(key & 63)


@njit(cache=True, nogil=True)
def bitmap_index(words):
    """(set bits below each word (int32, one more than the words), the set bits' values in
    ascending order): a key's dense id is the number of set bits below it."""
    below = np.zeros(words.size + 1, dtype=np.int32)   # ids are int32
    for w in range(words.size):
        below[w + 1] = below[w] + ones(words[w])
    values = np.empty(below[words.size], dtype=np.int64)
    for w in range(words.size):
        x = words[w]
        o = below[w]
        while x:
            low = x & (~x + np.uint64(1))   # the lowest set bit
            values[o] = w * 64 + ones(low - np.uint64(1))
            o += 1
            x ^= low
    return below, values


@njit(cache=True, nogil=True)
def merge_distinct(a, b):
    """The distinct values of sorted ``a`` (distinct) and sorted ``b`` (repeats allowed)."""
    out = np.empty(a.size + b.size, dtype=np.int64)
    i = j = o = 0
    while i < a.size or j < b.size:
        if j == b.size or (i < a.size and a[i] <= b[j]):
            v = a[i]
            i += 1
        else:
            v = b[j]
            j += 1
        if o == 0 or out[o - 1] != v:
            out[o] = v
            o += 1
    return out[:o].copy()


@njit(cache=True, nogil=True)
def users_keys(s, tokens, seq_ptr, user_seq_ptr, user_seq, users, n, m, out):
    """The candidate key of every candidate position of ``users`` into ``out``; how many."""
    o = 0
    for r in range(users.size):
        u = users[r]
        for t in range(user_seq_ptr[u], user_seq_ptr[u + 1]):
            j = user_seq[t]
            for i in range(seq_ptr[j], seq_ptr[j + 1] - n + 1):
                key = _key_at(s, tokens, i, n, m)
                if key >= 0:
                    out[o] = key
                    o += 1
    return o


@njit(cache=True, nogil=True)
def _id_of(key, words, below, present):
    """The dense id of a present key: its rank in the bitmap when there is one (``words``
    non-empty), else its index in the sorted ``present`` keys."""
    if words.size:
        w = key >> 6
        mask = (np.uint64(1) << np.uint64(key & 63)) - np.uint64(1)
        return below[w] + ones(words[w] & mask)
    lo, hi = 0, present.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if present[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def users_rows(s, tokens, seq_ptr, user_seq_ptr, user_seq, users, n, m, words, below, present,
               scratch, items, counts, row_len):
    """Row r = the distinct candidate ids of user ``users[r]`` in ascending order, with how many
    times the user holds each (int32, saturating): appended to ``items``/``counts``, its length
    in ``row_len[r]``; returns how many were written. ``scratch``: room for one user's
    candidate positions."""
    o = 0
    for r in range(users.size):
        u = users[r]
        k = 0
        for t in range(user_seq_ptr[u], user_seq_ptr[u + 1]):
            j = user_seq[t]
            for i in range(seq_ptr[j], seq_ptr[j + 1] - n + 1):
                key = _key_at(s, tokens, i, n, m)
                if key >= 0:
                    scratch[k] = _id_of(key, words, below, present)
                    k += 1
        row = scratch[:k]
        row.sort()
        start = o
        for x in range(k):
            if x == 0 or row[x] != row[x - 1]:
                items[o] = row[x]
                counts[o] = 1
                o += 1
            elif counts[o - 1] < 2147483647:
                counts[o - 1] += 1
        row_len[r] = o - start
    return o


@njit(cache=True, nogil=True)
def mark_released(s, tokens, seq_ptr, n, m, starts, sorted_keys, ranks):
    """In place, s[i] := the rank in S_n of the level-n candidate at i, or −1 (none there, or
    not released). Ascending i reads s[i + 1] before it is overwritten. The released keys with
    prefix a are sorted_keys[starts[a]:starts[a + 1]] (ranks ``ranks``): a search among those.
    Level 1 (n = 1): ``ranks`` is a table by token id."""
    for j in range(seq_ptr.size - 1):
        start, end = seq_ptr[j], seq_ptr[j + 1]
        for i in range(start, end):
            if n == 1:
                s[i] = ranks[tokens[i]]
                continue
            key = _key_at(s, tokens, i, n, m) if i + n <= end else np.int64(-1)
            if key < 0:
                s[i] = -1
                continue
            a = key // m
            lo, hi = starts[a], starts[a + 1]
            while lo < hi:   # a frequent prefix may hold thousands
                mid = (lo + hi) >> 1
                if sorted_keys[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            s[i] = ranks[lo] if lo < starts[a + 1] and sorted_keys[lo] == key else -1
