"""The only place that draws randomness for keys, bounding seeds and release decisions.

Release decisions never materialise a noise value (proof: mechanisms/README.md §3):
item u is released iff ExactBernoulli(p_u) with p_u = P(H[u] + Z > ρ) computed in closed form.
Only bits leave this module, so there are no floating-point "holes" (Mironov 2012).

ExactBernoulli(p) for a double p: p·2^64 = T + f with integer T and exact fraction f ∈ [0, 1).
Draw a uniform 64-bit word U; release iff U < T, or U == T and ExactBernoulli(f). This is exact:
P = T/2^64 + 2^-64·f = p. The recursion is reached with probability 2^-64 per item.
"""

from __future__ import annotations

import os
import secrets

import numpy as np
from scipy.special import log_ndtr

_TWO64 = 2.0 ** 64


class RandomSource:
    """OS randomness by default; a seeded source for experiments only (stamped in reports).

    >>> RandomSource().mode
    'os'
    """

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self._gen = None if seed is None else np.random.Generator(np.random.PCG64(seed))

    @property
    def mode(self) -> str:
        return "os" if self._gen is None else "seeded (not for release)"

    def words(self, n: int) -> np.ndarray:
        """n independent uniform 64-bit words."""
        if self._gen is None:
            return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).copy()
        return self._gen.bit_generator.random_raw(n).astype(np.uint64)

    def key(self) -> bytes:
        """A fresh 32-byte key for the user order and bounding seeds."""
        if self._gen is None:
            return secrets.token_bytes(32)
        return self.words(4).tobytes()

    def describe(self) -> dict:
        out: dict[str, object] = {"mode": self.mode}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def bernoulli(p: np.ndarray, source: RandomSource) -> np.ndarray:
    """Exact independent Bernoulli(p_i) draws for an array of doubles p (see module docstring)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.zeros(p.shape, dtype=bool)
    if p.size == 0:
        return out
    one = p >= 1.0
    out[one] = True
    mid = np.flatnonzero((p > 0.0) & ~one)
    if mid.size == 0:
        return out
    scaled = np.ldexp(p[mid], 64)          # exact: scaling by a power of two
    whole = np.floor(scaled)
    frac = scaled - whole                  # exact fractional part
    t = whole.astype(np.uint64)            # < 2^64 because p < 1
    u = source.words(mid.size)
    res = u < t
    tie = np.flatnonzero((u == t) & (frac > 0.0))
    if tie.size:
        res[tie] = bernoulli(frac[tie], source)
    out[mid] = res
    return out


def laplace_release_probability(weights: np.ndarray, threshold: float, scale: float) -> np.ndarray:
    """P(w + Lap(b) > ρ): ½e^{−(ρ−w)/b} if w ≤ ρ, else 1 − ½e^{−(w−ρ)/b}."""
    z = (np.asarray(weights, dtype=np.float64) - threshold) / scale
    half_tail = 0.5 * np.exp(-np.abs(z))
    return np.where(z <= 0, half_tail, 1.0 - half_tail)


def gaussian_release_probability(weights: np.ndarray, threshold: float, sigma: float) -> np.ndarray:
    """P(w + N(0, σ²) > ρ) = Φ((w − ρ)/σ), accurate in both tails."""
    z = (np.asarray(weights, dtype=np.float64) - threshold) / sigma
    return np.exp(log_ndtr(z))


# ---- discrete noise values (published counts: count.md, count_release.md) -------------------------
# Integer noise built from exact Bernoulli draws only. The success probabilities are doubles
# (relative error ~1e-16 against their real values), which changes ε by about that much (mechanisms/README.md §7).

def geometric(q: float, n: int, source: RandomSource) -> np.ndarray:
    """n iid counts of successes before the first failure, P(success) = q: P(G=g) = q^g (1−q)."""
    out = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        hit = bernoulli(np.full(active.size, q), source)
        out[active[hit]] += 1
        active = active[hit]
    return out


def discrete_laplace(scale: float, n: int, source: RandomSource) -> np.ndarray:
    """n iid two-sided geometric values, P(Z=z) ∝ exp(−|z|/scale): the difference of two
    geometrics with q = exp(−1/scale). ε-DP for integer L1 sensitivity Δ when scale = Δ/ε."""
    q = discrete_laplace_q(scale)
    return geometric(q, n, source) - geometric(q, n, source)


def discrete_laplace_q(scale: float) -> float:
    """The success probability q = e^{−1/scale} the discrete Laplace draws use (count.py
    computes its threshold from this very double)."""
    return float(np.exp(-1.0 / scale))


def discrete_gaussian(sigma: float, n: int, source: RandomSource) -> np.ndarray:
    """n iid discrete Gaussian values, P(Z=z) ∝ exp(−z²/(2σ²)) (Canonne-Kamath-Steinke 2020,
    Alg. 3: discrete Laplace proposals with t = ⌊σ⌋ + 1, accepted w.p.
    exp(−(|Y| − σ²/t)²/(2σ²)))."""
    t = float(np.floor(sigma) + 1.0)
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y = discrete_laplace(t, todo.size, source)
        accept = bernoulli(np.exp(-((np.abs(y) - sigma ** 2 / t) ** 2) / (2 * sigma ** 2)), source)
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def uniform_below(n: int, size: int, source: RandomSource) -> np.ndarray:
    """``size`` exact uniform integers in [0, n), n < 2^63, by rejection on 64-bit words."""
    if not 0 < n < 2 ** 63:
        raise ValueError(f"uniform_below: n must be in (0, 2^63), got {n}")
    limit = (2 ** 64 // n) * n  # accept words below the largest multiple of n
    out = np.empty(0, dtype=np.uint64)
    while out.size < size:
        w = source.words(max(size - out.size, 1))
        out = np.concatenate([out, w[w < np.uint64(limit)] if limit < 2 ** 64 else w])
    return (out[:size] % np.uint64(n)).astype(np.int64)


def geometric_failures(p: float, size: int, limit: int, source: RandomSource) -> np.ndarray:
    """``size`` iid counts of failures before the first success, P(success) = p, with every value
    ≥ ``limit`` reported as ``limit`` (the caller only needs to know it is that large).

    Exact from Bernoulli draws in O(log limit) words each: a geometric's binary digits are
    independent, P(bit k = 1) = r_k/(1 + r_k) with r_k = (1−p)^(2^k), and G ≥ 2^K (some bit
    ≥ K set) has probability (1−p)^(2^K). With 2^K ≥ limit the low K bits and that one event
    decide the clipped value.
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"geometric_failures: p must be in (0, 1], got {p}")
    if p == 1.0:
        return np.zeros(size, dtype=np.int64)
    log_q = float(np.log1p(-p))
    bits = max(int(limit - 1).bit_length(), 1)        # 2^bits ≥ limit
    out = np.zeros(size, dtype=np.int64)
    for k in range(bits):
        r = np.exp(log_q * 2.0 ** k)
        out += bernoulli(np.full(size, r / (1.0 + r)), source).astype(np.int64) << k
    beyond = bernoulli(np.full(size, np.exp(log_q * 2.0 ** bits)), source)
    out[beyond | (out >= limit)] = limit
    return out


def binomial(n: int, p: float, source: RandomSource) -> int:
    """Binomial(n, p), exact for any n < 2^62: successes are located by skipping over runs of
    failures with exact geometric draws (``geometric_failures``), so the cost grows with the
    number of successes min(p, 1−p)·n, not with n."""
    n = int(n)
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n >= 2 ** 62:
        raise ValueError(f"binomial: n must be below 2^62, got {n}")
    if p > 0.5:
        return n - binomial(n, 1.0 - p, source)
    successes, used = 0, 0          # trials consumed so far
    while True:
        rest = n - used
        if rest <= 0:
            return successes
        mean = rest * p
        batch = int(mean + 6.0 * mean ** 0.5 + 16)
        gaps = geometric_failures(p, batch, rest, source).tolist()
        for g in gaps:              # the next success is trial used + g, if g < n − used
            if g >= n - used:       # (clipped draws are ≥ the rest at the batch's start)
                return successes
            used += g + 1
            successes += 1



def binomial_half(n: int, source: RandomSource) -> int:
    """Binomial(n, 1/2), exact for any n < 2^62: the number of set bits among n uniform random
    bits (the last word masked), drawn 2^26 bits at a time. ``binomial`` costs a draw per
    success, n/2 of them here; this costs one 64-bit word per 64 trials."""
    n = int(n)
    if n >= 2 ** 62:
        raise ValueError(f"binomial_half: n must be below 2^62, got {n}")
    total, left = 0, max(n, 0)
    while left > 0:
        bits = min(left, 1 << 26)
        words = source.words((bits + 63) // 64)
        if bits % 64:
            words[-1] &= np.uint64((1 << (bits % 64)) - 1)
        total += int(np.bitwise_count(words).sum())
        left -= bits
    return total

def gumbel(scale: float, n: int, source: RandomSource) -> np.ndarray:
    """n iid Gumbel(0, scale) values −scale·ln(−ln U), U uniform on (0, 1) with 53-bit
    resolution. Used only to rank candidates (one-shot top-k); never published."""
    u = ((source.words(n) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
    return -scale * np.log(-np.log(u))
