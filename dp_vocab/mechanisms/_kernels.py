"""Compiled loops over CSR arrays (numba). Pure functions of their array arguments."""

from __future__ import annotations

import numpy as np
from numba import njit

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
def bound_rows(indptr, items, counts, seeds, item_hashes, item_rank, max_items, mode, ordered):
    """Cap every user to ≤ max_items items; returns (indptr, items) of the bounded sets.

    Priority, lowest first: mode 0 a per-user random key; mode 1 (−own count, random key);
    mode 2 (public rank, −own count, random key). The random key of (user, item) is
    splitmix64(seed_user ^ splitmix64(hash(item))): a function of the run key, the user id and
    the item string only. Rows are emitted in priority order when sampled or ``ordered``.
    """
    n_rows = indptr.size - 1
    out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    for r in range(n_rows):
        out_ptr[r + 1] = out_ptr[r] + min(indptr[r + 1] - indptr[r], max_items)
    out_items = np.empty(out_ptr[n_rows], dtype=np.int32)
    for r in range(n_rows):
        s = indptr[r]
        n = indptr[r + 1] - s
        o = out_ptr[r]
        if n <= max_items and not ordered:
            for j in range(n):
                out_items[o + j] = items[s + j]
            continue
        rand = np.empty(n, dtype=np.uint64)
        for j in range(n):
            rand[j] = _splitmix64(seeds[r] ^ _splitmix64(item_hashes[items[s + j]]))
        perm = np.argsort(rand)
        if mode != 0:
            prim = np.empty(n, dtype=np.uint64)
            for j in range(n):
                jj = perm[j]
                c = np.uint64(0xFFFFFFFF) - np.uint64(min(counts[s + jj], 0xFFFFFFFF))
                if mode == 2:
                    c |= np.uint64(item_rank[items[s + jj]]) << np.uint64(32)
                prim[j] = c
            perm = perm[np.argsort(prim, kind="mergesort")]
        for j in range(min(n, max_items)):
            out_items[o + j] = items[s + perm[j]]
    return out_ptr, out_items


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
