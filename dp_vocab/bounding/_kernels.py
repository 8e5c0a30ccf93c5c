"""The compiled bounding loop (numba): per-user caps over CSR arrays, in parallel over users.

A pure function of its array arguments; every backend calls it (the Dask workers on their
partitions' CSR arrays), so there is one implementation of the privacy-critical selection.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def _splitmix64(x):
    z = x + _M1
    z = (z ^ (z >> np.uint64(30))) * _M2
    z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _heapsort(a):
    """Sorts ``a`` in place in O(n log n) (not stable: equal values are interchangeable)."""
    n = a.size
    for end in range(n, 0, -1):
        # heapify once (end == n), then move the maximum to the end and repair the heap
        start = n // 2 - 1 if end == n else 0
        if end < n:
            a[0], a[end] = a[end], a[0]
        for root in range(start, -1, -1):
            r = root
            while True:
                c = 2 * r + 1
                if c >= end:
                    break
                if c + 1 < end and a[c + 1] > a[c]:
                    c += 1
                if a[r] >= a[c]:
                    break
                a[r], a[c] = a[c], a[r]
                r = c


@njit(cache=True)
def _sort_positions(pos, k1, k2, k3):
    """``pos`` sorted stably by (k1[p], k2[p], k3[p]): a bottom-up merge sort, O(n log n).
    (Three stable ``np.argsort`` calls give the same order but compile far more slowly.)"""
    n = pos.size
    a = pos.copy()
    b = np.empty_like(a)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                p = a[i]
                q = a[j]
                if k1[q] < k1[p] or (k1[q] == k1[p] and (
                        k2[q] < k2[p] or (k2[q] == k2[p] and k3[q] < k3[p]))):
                    b[o] = q   # the right run's key only when strictly smaller: stable
                    j += 1
                else:
                    b[o] = p
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True)
def _kth_smallest(a, k):
    """The value of rank k (0-based) in ``a``, which is reordered: quickselect (median of
    three, Hoare partition), then a sort of what is left after 2·log2(n) + 8 rounds, so
    O(n log n) even for counts a user crafted. (``np.partition`` gives the same value but
    compiles far more slowly.)"""
    lo = 0
    hi = a.size - 1
    rounds = 8
    m = a.size
    while m > 1:
        rounds += 2
        m >>= 1
    while lo < hi:
        rounds -= 1
        if rounds < 0:
            _heapsort(a[lo:hi + 1])
            return a[k]
        x, y, z = a[lo], a[(lo + hi) >> 1], a[hi]
        p = max(min(x, y), min(max(x, y), z))
        i = lo
        j = hi
        while i <= j:
            while a[i] < p:
                i += 1
            while a[j] > p:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        # a[lo..j] ≤ p ≤ a[i..hi]; every index strictly between j and i holds p
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return p
    return a[k]


@njit(cache=True)
def _select_smallest(prim, rand, tie, k, uniform_prim):
    """Indices of the k smallest (prim, rand, tie) triples, in O(n) expected: partition on
    prim, then the ties at the k-th prim value on rand, then (only when two items share a
    64-bit hash) on ``tie``, an order-preserving rank of the item strings. Unordered."""
    n = prim.size
    kth = prim[0] if uniform_prim else _kth_smallest(prim.copy(), k - 1)
    out = np.empty(k, dtype=np.int64)
    m = 0
    n_eq = 0
    for j in range(n):
        if prim[j] < kth:
            out[m] = j
            m += 1
        elif prim[j] == kth:
            n_eq += 1
    need = k - m
    eq = np.empty(n_eq, dtype=np.int64)
    e = 0
    for j in range(n):
        if prim[j] == kth:
            eq[e] = j
            e += 1
    if n_eq > need:
        r = np.empty(n_eq, dtype=np.uint64)
        for j in range(n_eq):
            r[j] = rand[eq[j]]
        rkth = _kth_smallest(r.copy(), need - 1)
        n_tied = 0
        for j in range(n_eq):
            if r[j] < rkth:
                out[m] = eq[j]
                m += 1
            elif r[j] == rkth:
                n_tied += 1
        tied = np.empty(n_tied, dtype=np.int64)
        t = 0
        for j in range(n_eq):
            if r[j] == rkth:
                tied[t] = eq[j]
                t += 1
        # equal rand: equal item hashes (distinct hashes give distinct rand); the item
        # strings decide, never the interning order (which depends on other users)
        tied = _sort_positions(tied, prim, rand, tie)   # equal prim and rand: by tie
        for j in range(k - m):
            out[m] = tied[j]
            m += 1
    else:
        for j in range(n_eq):
            out[m] = eq[j]
            m += 1
    return out


@njit(cache=True)
def _sample_row(items, counts, s, n, seed, hmix, item_tie, k, cand, pos, hist, out_items,
                out_counts, o):
    """A uniform sample (mode 0, unordered) of k of the row's n > k items into
    ``out_*[o:o + k]``: the k smallest keys splitmix64(seed ^ hmix), emitted as
    ``_select_smallest`` emits them (keys below the k-th in row order, then the k-th key's
    items by ``item_tie``).

    The keys are uniform 64-bit values, so the k smallest almost surely lie below
    2^64·(k + 4√k + 8)/n: one branch-free pass keeps the keys under that bound with their
    positions (~k + 4√k of them, in row order), and the selection and emission run on those
    alone. Fewer than k under the bound (a > 4σ event) repeats the pass with no bound, so the
    result never depends on the bound. ``cand`` (uint64) and ``pos`` (int64) are scratch of
    length ≥ n, ``hist`` (int64) of length 256."""
    bound = 1.8446744073709552e19 * ((k + 4.0 * np.sqrt(k) + 8.0) / n)
    limit = np.uint64(0xFFFFFFFFFFFFFFFF)
    if bound < 1.8e19:
        limit = np.uint64(bound)
    m = 0
    while True:
        m = 0
        for j in range(n):
            x = _splitmix64(seed ^ hmix[items[s + j]])
            cand[m] = x
            pos[m] = j
            m += x <= limit
        if m >= k:
            break
        limit = np.uint64(0xFFFFFFFFFFFFFFFF)
    # the k-th key: a histogram of the candidates' top 8 bits below the bound finds its
    # bucket (~1 key), the selection runs on that bucket only
    shift = 0
    while (limit >> np.uint64(shift)) >= np.uint64(256):
        shift += 1
    sh = np.uint64(shift)
    hist[:] = 0
    for i in range(m):
        hist[cand[i] >> sh] += 1
    below = 0
    b = 0
    while below + hist[b] <= k - 1:
        below += hist[b]
        b += 1
    bucket = np.empty(hist[b], dtype=np.uint64)
    t = 0
    for i in range(m):
        if (cand[i] >> sh) == b:
            bucket[t] = cand[i]
            t += 1
    kth = _kth_smallest(bucket, k - 1 - below)
    e = 0
    n_tied = 0
    last_tied = 0
    for i in range(m):   # in row order, branch-free; fewer than k keys lie below the k-th
        x = cand[i]
        out_items[o + e] = items[s + pos[i]]
        out_counts[o + e] = counts[s + pos[i]]
        e += x < kth
        if x == kth:
            n_tied += 1
            last_tied = pos[i]
    if n_tied == 1:   # the usual case: one item holds the k-th key
        out_items[o + e] = items[s + last_tied]
        out_counts[o + e] = counts[s + last_tied]
        return
    # equal keys: equal item hashes; the item strings decide, never the interning order
    tied = np.empty(n_tied, dtype=np.int64)
    keys = np.empty(n_tied, dtype=np.uint64)
    tie = np.zeros(n_tied, dtype=np.int64)
    t = 0
    for i in range(m):
        if cand[i] == kth:
            tied[t] = t
            keys[t] = kth
            if item_tie.size > 1:
                tie[t] = item_tie[items[s + pos[i]]]
            pos[t] = pos[i]   # t ≤ i: positions already read
            t += 1
    tied = _sort_positions(tied, keys, keys, tie)   # equal keys: by tie
    for j in range(k - e):
        out_items[o + e + j] = items[s + pos[tied[j]]]
        out_counts[o + e + j] = counts[s + pos[tied[j]]]


@njit(cache=True)
def _mixed_hashes(item_hashes):
    """splitmix64 of every item hash: the per-item half of the random keys."""
    hmix = np.empty(item_hashes.size, dtype=np.uint64)
    for i in range(item_hashes.size):
        hmix[i] = _splitmix64(item_hashes[i])
    return hmix


@njit(cache=True)
def max_row_length(indptr):
    """The length of the longest CSR row."""
    m = 0
    for r in range(indptr.size - 1):
        m = max(m, indptr[r + 1] - indptr[r])
    return m


@njit(cache=True, nogil=True)
def user_starts(keys, n_users):
    """Where each user's keys begin in sorted (user << 32 | item) keys, and the end: an
    indptr of n_users + 1, in one pass over the keys (not a binary search per user)."""
    out = np.zeros(n_users + 1, dtype=np.int64)
    for i in range(keys.size):
        u = keys[i] >> 32
        if u < 0 or u >= n_users:   # never write outside out, whatever the keys
            raise ValueError("a key of a user outside 0..n_users - 1")
        out[u + 1] += 1
    for u in range(n_users):
        out[u + 1] += out[u]
    return out


@njit(cache=True)
def _copy_row(items, counts, s, n, out_items, out_counts, o):
    for j in range(n):
        out_items[o + j] = items[s + j]
        out_counts[o + j] = counts[s + j]


@njit(cache=True)
def _uniform_row(r, indptr, items, counts, seeds, hmix, item_tie, item_rank, max_items, mode,
                ordered, out_items, out_counts, o, cand_scratch, pos_scratch, hist_scratch):
    """Row r of ``_bound_rows`` for mode 0 unordered, written to
    ``out_*[o:o + min(n, max_items)]``; ``*_scratch`` as ``_sample_row`` needs them."""
    s = indptr[r]
    n = indptr[r + 1] - s
    if n <= max_items:
        _copy_row(items, counts, s, n, out_items, out_counts, o)
    else:
        _sample_row(items, counts, s, n, seeds[r], hmix, item_tie, max_items, cand_scratch,
                    pos_scratch, hist_scratch, out_items, out_counts, o)


@njit(cache=True)
def _priority_row(r, indptr, items, counts, seeds, hmix, item_tie, item_rank, max_items, mode,
                 ordered, out_items, out_counts, o, cand_scratch, pos_scratch, hist_scratch):
    """Row r of ``_bound_rows`` for the other priorities and ordered rows (the arguments of
    ``_uniform_row``; it needs no scratch)."""
    s = indptr[r]
    n = indptr[r + 1] - s
    if n <= max_items and not ordered:
        _copy_row(items, counts, s, n, out_items, out_counts, o)
        return
    rand = np.empty(n, dtype=np.uint64)
    prim = np.zeros(n, dtype=np.uint64)
    tie = np.zeros(n, dtype=np.int64)
    for j in range(n):
        if item_tie.size > 1:
            tie[j] = item_tie[items[s + j]]
        h = hmix[items[s + j]]
        rand[j] = h if ordered else _splitmix64(seeds[r] ^ h)
        if mode != 0:
            c = np.uint64(0xFFFFFFFF) - np.uint64(min(counts[s + j], 0xFFFFFFFF))
            if mode == 2:
                c |= np.uint64(item_rank[items[s + j]]) << np.uint64(32)
            prim[j] = c
    if n > max_items:
        sel = _select_smallest(prim, rand, tie, max_items, mode == 0)
    else:
        sel = np.arange(n)
    if ordered:
        sel = _sort_positions(sel, prim, rand, tie)
    for j in range(sel.size):
        out_items[o + j] = items[s + sel[j]]
        out_counts[o + j] = counts[s + sel[j]]


def _bound_rows(indptr, items, counts, seeds, item_hashes, item_tie, item_rank, max_items, mode,
                ordered):
    """Cap every user to ≤ max_items items; returns (indptr, items, counts) of the bounded sets
    (CSR, the same rows as the input).

    Priority (``Priority`` values), lowest first: mode 0 a per-user random key splitmix64(seed_user ^ mix(hash(item)))
    (a uniform sample; a function of the run key, the user id and the item string only);
    mode 1 (−own count, key); mode 2 (public rank, −own count, key). For ``ordered`` rows (GW's
    fill order) the key is mix(hash(item)) itself: ties are broken the same way for every user,
    a function of the user's own data that concentrates the greedy budget on the same items
    across users. Unordered "top" caps keep the per-user random key: consistent ties there
    would concentrate weight on arbitrary low-hash items, and DPNE releases fewer n-grams.
    Remaining ties (two items with one 64-bit hash: 2^-64 by chance, ~2^32 work to craft) go
    to ``item_tie``, a rank that orders items as their strings do (length 1: no such ties).
    Selection is O(row length); with ``ordered`` the kept items are emitted in priority order
    (GW fills them in that order).

    One loop, compiled by ``_specialised`` with ``bound_row`` = ``_uniform_row`` (mode 0
    unordered) or ``_priority_row`` (the rest), so that a run compiles only the selection it
    uses.
    """
    n_rows = indptr.size - 1
    out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    for r in range(n_rows):
        out_ptr[r + 1] = out_ptr[r] + min(indptr[r + 1] - indptr[r], max_items)
    out_items = np.empty(out_ptr[n_rows], dtype=items.dtype)
    out_counts = np.empty(out_ptr[n_rows], dtype=counts.dtype)
    hmix = _mixed_hashes(item_hashes)
    max_len = max_row_length(indptr)
    n_chunks = min(n_rows, 64)
    for c in prange(n_chunks):
        cand_scratch = np.empty(max_len, dtype=np.uint64)
        pos_scratch = np.empty(max_len, dtype=np.int64)
        hist_scratch = np.empty(256, dtype=np.int64)
        for r in range(c * n_rows // n_chunks, (c + 1) * n_rows // n_chunks):
            bound_row(r, indptr, items, counts, seeds, hmix, item_tie,  # noqa: F821
                      item_rank, max_items, mode, ordered, out_items, out_counts, out_ptr[r],
                      cand_scratch, pos_scratch, hist_scratch)
    return out_ptr, out_items, out_counts


@njit(cache=True)
def _before(prim, rand, tie, i, j):
    """(prim, rand, tie)[i] < (prim, rand, tie)[j]."""
    if prim[i] != prim[j]:
        return prim[i] < prim[j]
    if rand[i] != rand[j]:
        return rand[i] < rand[j]
    return tie[i] < tie[j]


@njit(cache=True)
def _sift_down(prim, rand, tie, heap, r, k):
    """Restores the max-heap order of ``heap[:k]`` (largest triple on top) below node r."""
    while True:
        c = 2 * r + 1
        if c >= k:
            return
        if c + 1 < k and _before(prim, rand, tie, heap[c], heap[c + 1]):
            c += 1
        if not _before(prim, rand, tie, heap[r], heap[c]):
            return
        heap[r], heap[c] = heap[c], heap[r]
        r = c


@njit(cache=True)
def _k_first(prim, rand, tie, k):
    """Indices of the k smallest (prim, rand, tie) triples (distinct triples: one answer),
    unordered: a max-heap of the k best so far, O(n log k). Lighter to compile than
    ``_select_smallest``, which the first run of a uniform cap never needs."""
    heap = np.arange(k)
    for root in range(k // 2 - 1, -1, -1):   # heapify the first k
        _sift_down(prim, rand, tie, heap, root, k)
    for j in range(k, prim.size):
        if _before(prim, rand, tie, j, heap[0]):   # better than the worst kept: replace it
            heap[0] = j
            _sift_down(prim, rand, tie, heap, 0, k)
    return heap


@njit(cache=True)
def _cap_outside_row(r, indptr, items, counts, seeds, hmix, item_tie, item_outside,
                     max_outside, out_ptr, out_items, out_counts):
    """Row r of ``_cap_outside``, written to ``out_*[out_ptr[r]:out_ptr[r + 1]]``."""
    s = indptr[r]
    n = indptr[r + 1] - s
    o = out_ptr[r]
    if out_ptr[r + 1] - o == n:
        _copy_row(items, counts, s, n, out_items, out_counts, o)
        return
    n_out = n - (out_ptr[r + 1] - o) + max_outside   # the row dropped n_out − max_outside
    pos = np.empty(n_out, dtype=np.int64)
    prim = np.empty(n_out, dtype=np.uint64)
    rand = np.empty(n_out, dtype=np.uint64)
    tie = np.zeros(n_out, dtype=np.int64)
    m = 0
    for j in range(n):
        it = items[s + j]
        if item_outside[it]:
            pos[m] = j
            prim[m] = np.uint64(0xFFFFFFFF) - np.uint64(min(counts[s + j], 0xFFFFFFFF))
            rand[m] = _splitmix64(seeds[r] ^ hmix[it])
            if item_tie.size > 1:
                tie[m] = item_tie[it]
            m += 1
    keep = np.ones(n, dtype=np.bool_)
    for j in range(n_out):
        keep[pos[j]] = False
    for j in _k_first(prim, rand, tie, max_outside):
        keep[pos[j]] = True
    for j in range(n):
        if keep[j]:
            out_items[o] = items[s + j]
            out_counts[o] = counts[s + j]
            o += 1


def _cap_outside(indptr, items, counts, seeds, item_hashes, item_tie, item_outside,
                 max_outside):  # compiled below as ``cap_outside``
    """Cap every user to ≤ max_outside items with ``item_outside[item] = 1`` (items outside a
    public list), keeping all its other items; returns (indptr, items, counts), rows in their
    input order. Which outside items stay: the user's most frequent (−own count), then the
    per-user random key splitmix64(seed_user ^ mix(hash(item))), then ``item_tie`` (as
    ``_bound_rows`` mode 1): a function of the run key, the user id and the user's own items
    and counts, never of other users. Rows are independent: in parallel over chunks of rows
    in the threaded build."""
    n_rows = indptr.size - 1
    out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    n_chunks = min(n_rows, 64)
    for c in prange(n_chunks):
        for r in range(c * n_rows // n_chunks, (c + 1) * n_rows // n_chunks):
            n_out = 0
            for j in range(indptr[r], indptr[r + 1]):
                n_out += item_outside[items[j]]
            out_ptr[r + 1] = indptr[r + 1] - indptr[r] - max(n_out - max_outside, 0)
    for r in range(n_rows):
        out_ptr[r + 1] += out_ptr[r]
    out_items = np.empty(out_ptr[n_rows], dtype=items.dtype)
    out_counts = np.empty(out_ptr[n_rows], dtype=counts.dtype)
    hmix = _mixed_hashes(item_hashes)
    for c in prange(n_chunks):
        for r in range(c * n_rows // n_chunks, (c + 1) * n_rows // n_chunks):
            _cap_outside_row(r, indptr, items, counts, seeds, hmix, item_tie, item_outside,
                             max_outside, out_ptr, out_items, out_counts)
    return out_ptr, out_items, out_counts


def _specialised(f, suffix: str, **bindings):
    """A copy of ``f`` named ``f.__name__ + suffix`` whose globals ``bindings`` (compiled
    functions) replace: numba compiles each copy with only the callees bound to it. The
    distinct name matters: numba's on-disk cache files a function by name and line and keys it
    by signature and bytecode, not by its globals or the ``parallel`` flag, so two builds of
    one body under one name load each other's cached code (whichever compiled first)."""
    g = types.FunctionType(f.__code__, {**f.__globals__, **bindings}, f.__name__ + suffix)
    g.__qualname__ = f.__qualname__ + suffix
    g.__doc__ = f.__doc__
    return g


# each variant compiled twice: threads pay off only on many pairs (a lone user's release, as in
# the statistical tests, would spend milliseconds starting them)
_KERNELS = {(uniform, parallel): njit(cache=True, parallel=parallel)(_specialised(
                _bound_rows, ("_uniform" if uniform else "_priority")
                + ("_threads" if parallel else ""),
                bound_row=_uniform_row if uniform else _priority_row))
            for uniform in (True, False) for parallel in (True, False)}
# (user, item) pairs. Below this one thread is quick and threads would save less than the
# threaded build's extra first compile costs (the bundled sample runs serial, so a newcomer's
# first run compiles only the serial build)
_PARALLEL_FROM = 1 << 21


def bound_rows(indptr, items, counts, seeds, item_hashes, item_tie, item_rank, max_items, mode,
               ordered):
    """See ``_bound_rows``; runs on every core for large inputs. Rows within the cap and
    unordered are kept as they are: when every row is, the input arrays are returned (no copy:
    corpora whose users all hold fewer items than the cap are common)."""
    if not ordered and (indptr.size < 2 or int(np.diff(indptr).max()) <= max_items):
        return indptr, items, counts
    run = _KERNELS[mode == 0 and not ordered, items.size >= _PARALLEL_FROM]
    return run(indptr, items, counts, seeds, item_hashes, item_tie, item_rank, max_items, mode,
               ordered)


_CAP_OUTSIDE = {parallel: njit(cache=True, parallel=parallel)(_specialised(
                    _cap_outside, "_threads" if parallel else ""))
                for parallel in (True, False)}


def cap_outside(indptr, items, counts, seeds, item_hashes, item_tie, item_outside, max_outside):
    """See ``_cap_outside``; runs on every core from ``_PARALLEL_FROM`` pairs, as
    ``bound_rows``."""
    if max_outside < 1:   # the selection needs k ≥ 1
        raise ValueError(f"max_outside: expected ≥ 1, got {max_outside}")
    return _CAP_OUTSIDE[items.size >= _PARALLEL_FROM](
        indptr, items, counts, seeds, item_hashes, item_tie, item_outside, max_outside)
