"""Compiled loops over CSR arrays (numba). Pure functions of their array arguments."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _splitmix64(x):
    z = x + _M1
    z = (z ^ (z >> np.uint64(30))) * _M2
    z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _select_smallest(prim, rand, k, uniform_prim):
    """Indices of the k smallest (prim, rand) pairs, in O(n) expected: partition on prim, then
    partition the ties at the k-th prim value on rand. Unordered."""
    n = prim.size
    kth = prim[0] if uniform_prim else np.partition(prim.copy(), k - 1)[k - 1]
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
        rkth = np.partition(r.copy(), need - 1)[need - 1]
        for j in range(n_eq):
            if m < k and r[j] <= rkth:  # 64-bit ties: probability ~2^-64; first ones win
                out[m] = eq[j]
                m += 1
    else:
        for j in range(n_eq):
            out[m] = eq[j]
            m += 1
    return out


@njit(cache=True, parallel=True)
def bound_rows(indptr, items, counts, seeds, item_hashes, item_rank, max_items, mode, ordered):
    """Cap every user to ≤ max_items items; returns (indptr, positions) of the bounded sets,
    positions indexing the input ``items``/``counts`` arrays.

    Priority, lowest first: mode 0 a per-user random key splitmix64(seed_user ^ mix(hash(item)))
    (a uniform sample; a function of the run key, the user id and the item string only);
    mode 1 (−own count, key); mode 2 (public rank, −own count, key). For ``ordered`` rows (GW's
    fill order) the key is mix(hash(item)) itself: ties are broken the same way for every user,
    a function of the user's own data that concentrates the greedy budget (GW releases ~2% more
    items on Reddit). Unordered "top" caps keep the per-user random key: consistent ties there
    concentrate weight on arbitrary low-hash items (DPNE released ~15% fewer n-grams). Selection is O(row length); with ``ordered`` the kept items are
    emitted in priority order (GW fills them in that order).
    """
    n_rows = indptr.size - 1
    out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    for r in range(n_rows):
        out_ptr[r + 1] = out_ptr[r] + min(indptr[r + 1] - indptr[r], max_items)
    out_pos = np.empty(out_ptr[n_rows], dtype=np.int64)
    hmix = np.empty(item_hashes.size, dtype=np.uint64)
    for i in prange(item_hashes.size):
        hmix[i] = _splitmix64(item_hashes[i])
    for r in prange(n_rows):
        s = indptr[r]
        n = indptr[r + 1] - s
        o = out_ptr[r]
        if n <= max_items and not ordered:
            for j in range(n):
                out_pos[o + j] = s + j
            continue
        rand = np.empty(n, dtype=np.uint64)
        prim = np.zeros(n, dtype=np.uint64)
        for j in range(n):
            h = hmix[items[s + j]]
            rand[j] = h if ordered else _splitmix64(seeds[r] ^ h)
            if mode != 0:
                c = np.uint64(0xFFFFFFFF) - np.uint64(min(counts[s + j], 0xFFFFFFFF))
                if mode == 2:
                    c |= np.uint64(item_rank[items[s + j]]) << np.uint64(32)
                prim[j] = c
        if n > max_items:
            sel = _select_smallest(prim, rand, max_items, mode == 0)
        else:
            sel = np.arange(n)
        if ordered:
            # sort the kept items by (prim, rand): by rand, then stably by prim
            sel = sel[np.argsort(rand[sel])]
            sel = sel[np.argsort(prim[sel], kind="mergesort")]
        for j in range(sel.size):
            out_pos[o + j] = s + sel[j]
    return out_ptr, out_pos


@njit(cache=True)
def l1_descent(order, indptr, items, n_items, gamma):
    """Policy Laplace (Gopi et al. Alg. 3), water-level form: each user raises its items below Γ
    by a common λ* (items whose gap ≤ λ* are set to Γ exactly) with total increase ≤ 1."""
    hist = np.zeros(n_items, dtype=np.float64)
    maxlen = 0
    for r in range(indptr.size - 1):
        maxlen = max(maxlen, indptr[r + 1] - indptr[r])
    gaps = np.empty(maxlen, dtype=np.float64)
    idx = np.empty(maxlen, dtype=np.int64)
    for r in order:
        n = 0
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if hist[u] < gamma:
                gaps[n] = gamma - hist[u]
                idx[n] = u
                n += 1
        if n == 0:
            continue
        g = np.sort(gaps[:n])
        rem = 1.0
        prev = 0.0
        lam = np.inf
        for i in range(n):
            cost = (g[i] - prev) * (n - i)
            if cost <= rem:
                rem -= cost
                prev = g[i]
            else:
                lam = prev + rem / (n - i)
                break
        # Filled iff its gap is one the loop paid for in full (gap ≤ prev): decided on the
        # same floats, so filled items sit at Γ exactly and the others get +λ* < their gap.
        fill = np.inf if lam == np.inf else prev
        for k in range(n):
            if gaps[k] <= fill:
                hist[idx[k]] = gamma
            else:
                hist[idx[k]] += lam
    return hist


@njit(cache=True)
def l2_descent(order, indptr, items, n_items, gamma):
    """Policy Gaussian (Gopi et al. Alg. 5): move the user's items below Γ towards Γ·1 by L2
    distance ≤ 1 (all to Γ if they are within distance 1)."""
    hist = np.zeros(n_items, dtype=np.float64)
    for r in order:
        z2 = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if hist[u] < gamma:
                g = gamma - hist[u]
                z2 += g * g
        if z2 == 0.0:
            continue
        z = np.sqrt(z2)
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if hist[u] < gamma:
                if z <= 1.0:
                    hist[u] = gamma
                else:
                    hist[u] += (gamma - hist[u]) / z
    return hist


@njit(cache=True)
def greedy_fill(order, indptr, items, n_items, gamma):
    """GW update (Carvalho et al.): each user spends budget 1 filling its items to Γ in its own
    fixed priority order (the row order); the first item it cannot fill takes the rest."""
    hist = np.zeros(n_items, dtype=np.float64)
    for r in order:
        budget = 1.0
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if hist[u] >= gamma:
                continue
            cost = gamma - hist[u]
            if cost <= budget:
                hist[u] = gamma
                budget -= cost
            else:
                hist[u] += budget
                break
    return hist
