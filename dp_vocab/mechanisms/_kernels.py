"""Compiled update rules of the sequential policies (numba): one pass over users in keyed
order. Pure functions of their array arguments."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..bounding._kernels import max_row_length


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the CPU to start loading the cache line of ``array[index]`` (LLVM's prefetch: read,
    keep in all cache levels); a hint that never faults and never changes a result."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(builder.gep(data, [args[1]]), byte_ptr),
                          ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


_AHEAD = 8   # users


@njit(cache=True)
def _prefetch_rows(order, i, indptr, items):
    """Start loading the row offsets of user ``order[i + 8]`` and the first two cache lines of
    user ``order[i + 4]``'s row. In keyed order consecutive users' rows lie anywhere in memory,
    and each row's loop ends in a mispredicted branch that would otherwise serialise those
    cache misses."""
    n = order.size
    if i + _AHEAD < n:
        _prefetch(indptr, order[i + _AHEAD])
    if i + _AHEAD // 2 < n:
        s = indptr[order[i + _AHEAD // 2]]
        if s < items.size:
            _prefetch(items, s)
        if s + 16 < items.size:
            _prefetch(items, s + 16)


@njit(cache=True)
def _row_scratch(indptr):
    """(gaps, item ids) buffers for the longest row: a user's items below the cutoff."""
    n = max_row_length(indptr)
    return np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64)


@njit(cache=True)
def l1_descent(order, indptr, items, n_items, gamma):
    """Policy Laplace (Gopi et al. Alg. 3), water-level form: each user raises its items below Γ
    by a common λ* (items whose gap ≤ λ* are set to Γ exactly) with total increase ≤ 1."""
    hist = np.zeros(n_items, dtype=np.float64)
    gaps, idx = _row_scratch(indptr)
    for i in range(order.size):
        _prefetch_rows(order, i, indptr, items)
        r = order[i]
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
        for k in range(n):
            cost = (g[k] - prev) * (n - k)
            if cost <= rem:
                rem -= cost
                prev = g[k]
            else:
                lam = prev + rem / (n - k)
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
    distance ≤ 1 (all to Γ if they are within distance 1): ``l2_descent_cutoffs`` with the one
    cutoff Γ for every item (the same floating-point operations)."""
    return l2_descent_cutoffs(order, indptr, items, n_items, np.full(n_items, gamma))


@njit(cache=True)
def l2_descent_cutoffs(order, indptr, items, n_items, gammas):
    """L2-descent with a public cutoff Γ_i per item (``gammas``, length n_items, all > 0):
    the user's coordinates below their cutoffs move straight towards them by L2 distance ≤ 1.
    In coordinates H − Γ this is ``l2_descent`` translated, so it contracts the same way
    (public.md §2). A row's items are distinct (as every ItemSets row is)."""
    hg = descent_state(gammas)
    l2_descent_rows(hg, order, indptr, items)
    return descent_weights(hg)


@njit(cache=True)
def descent_state(gammas):
    """Each item's (H, Γ) side by side, at 2u and 2u + 1, H = 0: one cache line per item
    read, not two (flat, with explicit loops: 2-D slicing makes the first compilation far
    slower)."""
    hg = np.empty(2 * gammas.size, dtype=np.float64)
    for u in range(gammas.size):
        hg[2 * u] = 0.0
        hg[2 * u + 1] = gammas[u]
    return hg


@njit(cache=True)
def descent_weights(hg):
    """The H of a ``descent_state``."""
    hist = np.empty(hg.size // 2, dtype=np.float64)
    for u in range(hist.size):
        hist[u] = hg[2 * u]
    return hist


@njit(cache=True)
def l2_descent_rows(hg, order, indptr, items):
    """``l2_descent_cutoffs``' users in ``order`` applied to the state ``hg`` in place: users
    given in several calls, in keyed order, take the same floating-point steps as in one."""
    gaps, idx = _row_scratch(indptr)
    for i in range(order.size):
        _prefetch_rows(order, i, indptr, items)
        r = order[i]
        z2 = 0.0
        n = 0
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if hg[2 * u] < hg[2 * u + 1]:
                g = hg[2 * u + 1] - hg[2 * u]
                gaps[n] = g
                idx[n] = u
                n += 1
                z2 += g * g
        if z2 == 0.0:
            continue
        z = np.sqrt(z2)
        if z <= 1.0:
            for k in range(n):
                hg[2 * idx[k]] = hg[2 * idx[k] + 1]
        else:
            for k in range(n):
                hg[2 * idx[k]] += gaps[k] / z


@njit(cache=True)
def greedy_fill(order, indptr, items, n_items, gamma):
    """GW update (Carvalho et al.): each user spends budget 1 filling its items to Γ in its own
    fixed priority order (the row order); the first item it cannot fill takes the rest."""
    hist = np.zeros(n_items, dtype=np.float64)
    for i in range(order.size):
        _prefetch_rows(order, i, indptr, items)
        r = order[i]
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
