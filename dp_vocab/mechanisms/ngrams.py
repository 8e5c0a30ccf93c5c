"""DPNE: differentially private n-gram extraction (Kim, Gopi, Kulkarni, Yekhanin, NeurIPS 2021; §8).

Levels n = 1..T. Level 1 is a Weighted Gaussian over unigrams. Level n ≥ 2 only considers
candidates C_n = {g : g[:-1] ∈ S_{n−1} and g[1:] ∈ S_{n−1}}, a set fixed by the (already public)
previous level, so it is a Gaussian mechanism over a public domain: every candidate is noised,
zero weights included. We do that exactly, where the published code approximates: |C_n| is
counted exactly (a join of S_{n−1} with itself on the overlapping (n−2)-gram) and the released
zero-weight candidates are K ~ Binomial(|C_n| − |supp W_n|, Φ(−ρ_n/σ_n)) uniform members of
C_n \\ supp W_n.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from scipy.special import ndtri

from ..extraction import TokenCorpus
from ..itemsets import ItemSets, Vocabulary
from ..privacy import calibrate
from ..privacy.noise import RandomSource, bernoulli, binomial, gaussian_release_probability
from ..privacy.noise import uniform_below
from ..privacy.params import check_positive_int
from ..errors import ParameterError
from ..release import Release
from ..itemsets import item_hashes
from .base import Mechanism, bound_itemsets, spread_weights
from .user_order import check_key, derive_key

_KEY_BITS = 42


def _level_itemsets(corpus: TokenCorpus, cand: np.ndarray, pos_user: np.ndarray, strings_of):
    """Per-user distinct candidates from per-position candidate keys (−1: none).

    Returns (ItemSets over this level's present candidates, their sorted int64 keys)."""
    valid = cand >= 0
    combined = (pos_user[valid].astype(np.int64) << _KEY_BITS) | cand[valid]
    uniq, counts = np.unique(combined, return_counts=True)
    users = uniq >> _KEY_BITS
    keys, item_ids = np.unique(uniq & ((1 << _KEY_BITS) - 1), return_inverse=True)
    indptr = np.zeros(corpus.n_users + 1, dtype=np.int64)
    np.cumsum(np.bincount(users, minlength=corpus.n_users), out=indptr[1:])
    vocab = Vocabulary(strings_of(keys))
    return ItemSets(vocab, corpus.user_ids, indptr, item_ids.astype(np.int32),
                    np.minimum(counts, 2 ** 31 - 1)), keys


class DPNE(Mechanism):
    """DPNE with exact candidate counting and exact zero-weight sampling. Privacy claim:

    - one Gaussian budget σ* = σ_AGM(ε, δ/2; 1) split over T levels with Σ_n 1/σ_n² = 1/σ*²
      (uniform: σ_n = σ*√T; geometric base b: σ_n = σ* b^n √(Σ_i b^{−2i})): each level has L2
      sensitivity 1 (weights 1/√k_u on ≤ Δ0 items), so together they are exactly one Gaussian
      mechanism with σ*: (ε, δ/2) on the common support;
    - level 1 threshold ρ_1 = max_{1≤t≤Δ0} [1/√t − σ_1Φ⁻¹(δ_t(δ/2))]: δ/2 for X's unigrams;
    - level n ≥ 2 runs over the public domain C_n (all candidates noised), so it spends no δ;
      ρ_n = σ_n Φ⁻¹(1 − η·min(|S_{n−1}|/|C_n|, 1)) only sets the expected spurious count;
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "dpne"
    summary = "DPNE n-gram levels up to max_n, exact candidate counts and spurious sampling"
    noise = "gaussian"
    sensitivity = "per level: L2 <= 1 (weights 1/sqrt(k) on <= Δ0 candidates of the level)"
    input = "sequences"

    def __init__(self, epsilon, delta, max_n=5, max_items_per_user=10, eta=0.01,
                 budget_split="uniform", sampling="top"):
        self._set("max_n", check_positive_int(max_n, "max_n"))
        if not (isinstance(eta, (int, float)) and 0 < eta < 1):
            raise ParameterError("eta", eta, "a number in (0, 1): the tolerated spurious fraction")
        self._set("eta", float(eta))
        if budget_split != "uniform" and not (isinstance(budget_split, (int, float)) and
                                              budget_split > 0):
            raise ParameterError("budget_split", budget_split,
                                 "'uniform' or a geometric base b > 0 (b > 1 favours short n-grams)")
        self._set("budget_split", budget_split)
        super().__init__(epsilon, delta, max_items_per_user, sampling)

    def _calibrate(self):
        sigma_star = calibrate.agm_sigma(self.epsilon, self.delta / 2)
        T = self.max_n
        if self.budget_split == "uniform":
            sigmas = [sigma_star * math.sqrt(T)] * T
        else:
            b = float(self.budget_split)
            norm = math.sqrt(sum(b ** (-2 * i) for i in range(1, T + 1)))
            sigmas = [sigma_star * b ** n * norm for n in range(1, T + 1)]
        self._set("sigma_star", sigma_star)
        self._set("level_sigmas", tuple(sigmas))
        self._set("noise_scale", sigmas[0])
        self._set("threshold", calibrate.gaussian_threshold(sigmas[0], self.delta / 2,
                                                            self.max_items_per_user))

    @property
    def noise_multiplier(self):
        return self.sigma_star

    def params(self):
        return {**super().params(), "max_n": self.max_n, "eta": self.eta,
                "budget_split": self.budget_split}

    def privacy(self):
        return {**super().privacy(), "level_sigmas": list(self.level_sigmas),
                "composed_sigma": self.sigma_star}

    # -- levels ----------------------------------------------------------------------------
    def _level_key(self, key: bytes, n: int) -> bytes:
        return derive_key(key, n.to_bytes(2, "big"))

    def _levels(self, data):
        if isinstance(data, TokenCorpus):
            return _LocalLevels(data, self)
        if hasattr(data, "dpne_levels"):
            return data.dpne_levels(self)
        raise ParameterError("dpne input", type(data).__name__,
                             "token sequences (TokenCorpus), not item sets",
                             "Run DPNE through a recipe or extract_sequences().")

    def level_histogram(self, data, n: int, previous: list[str],
                        key: bytes) -> dict[str, float]:
        """Pre-noise level-n weights given the released (n−1)-grams (tests, audits)."""
        levels = self._levels(data)
        if n > 1:
            levels.set_released_strings(n - 1, sorted(previous))
        names, w = levels.level_weights(n, self._level_key(check_key(key), n))
        return dict(zip(names, w.tolist()))

    def histogram(self, data, key: bytes) -> dict[str, float]:
        return self.level_histogram(data, 1, [], key)

    def release(self, data, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        levels = self._levels(data)
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        released_all: list[str] = []
        per_level = []
        previous: list[str] = []
        for n in range(1, self.max_n + 1):
            sigma = self.level_sigmas[n - 1]
            spurious: list[str] = []
            if n == 1:
                rho = self.threshold
            else:
                if not previous:
                    per_level.append({"n": n, "released": 0, "spurious": 0})
                    continue
                if len(previous) >= 2 ** (_KEY_BITS // 2):
                    raise ParameterError("dpne level", n - 1, f"fewer than {2 ** 21} released "
                                         "(n−1)-grams", "Lower epsilon or max_items_per_user.")
                join = CandidateJoin(previous, levels.joiner)
                if join.size == 0:
                    per_level.append({"n": n, "released": 0, "spurious": 0})
                    previous = []
                    continue
                rho = sigma * float(ndtri(1 - self.eta * min(len(previous) / join.size, 1.0)))
            names, w = levels.level_weights(n, self._level_key(key, n))
            order = np.argsort(item_hashes(names), kind="stable")  # same draws on any backend
            names, w = [names[i] for i in order.tolist()], w[order]
            keep = bernoulli(gaussian_release_probability(w, rho, sigma), random)
            kept = [g for g, k in zip(names, keep.tolist()) if k]
            if n >= 2:
                p0 = float(gaussian_release_probability(np.zeros(1), rho, sigma)[0])
                k = binomial(join.size - len(names), p0, random)
                spurious = join.sample(k, {join.key_of(g) for g in names}, random)
                kept += spurious
            previous = sorted(kept)
            levels.set_released(n, previous)
            released_all += kept
            per_level.append({"n": n, "released": len(kept), "spurious": len(spurious)})
        return Release(items=sorted(released_all), mechanism=self.registry_name,
                       params=self.params(), epsilon=self.epsilon, delta=self.delta,
                       randomness=random.describe(), privacy=self.privacy(),
                       ledger=[self.stage().to_dict()], details={"levels": per_level})


class CandidateJoin:
    """C_n from the released (n−1)-grams S (public): g with g[:-1] ∈ S and g[1:] ∈ S.

    Candidate key: index(g[:-1])·|S| + index(g[1:]). |C_n| is counted exactly by grouping S by
    the overlapping (n−2)-gram; ``sample`` draws distinct uniform members by rejection."""

    def __init__(self, prev: list[str], joiner: str):
        self.prev, self.joiner, self.m = prev, joiner, len(prev)
        self.index = {g: i for i, g in enumerate(prev)}
        by_suffix, by_prefix = defaultdict(list), defaultdict(list)
        for idx, g in enumerate(prev):
            parts = g.split(joiner)
            by_suffix[joiner.join(parts[1:])].append(idx)
            by_prefix[joiner.join(parts[:-1])].append(idx)
        self.blocks = [(by_suffix[k], by_prefix[k]) for k in sorted(set(by_suffix) & set(by_prefix))]
        sizes = np.array([len(a) * len(b) for a, b in self.blocks], dtype=np.int64)
        self.cum = np.cumsum(sizes)
        self.size = int(self.cum[-1]) if sizes.size else 0

    def key_of(self, gram: str) -> int:
        head, _, last = gram.rpartition(self.joiner)
        first, _, tail = gram.partition(self.joiner)
        return self.index[head] * self.m + self.index[tail]

    def name_of(self, a: int, b: int) -> str:
        return self.prev[a] + self.joiner + self.prev[b].rsplit(self.joiner, 1)[-1]

    def sample(self, k: int, exclude: set, random: RandomSource) -> list[str]:
        chosen: dict[int, str] = {}
        while len(chosen) < k:
            for r in uniform_below(self.size, 2 * (k - len(chosen)), random).tolist():
                blk = int(np.searchsorted(self.cum, r, side="right"))
                off = r - (int(self.cum[blk - 1]) if blk else 0)
                a_ids, b_ids = self.blocks[blk]
                a, b = a_ids[off // len(b_ids)], b_ids[off % len(b_ids)]
                key = a * self.m + b
                if key in exclude or key in chosen:
                    continue
                chosen[key] = self.name_of(a, b)
                if len(chosen) == k:
                    break
        return list(chosen.values())


class _LocalLevels:
    """DPNE levels over in-memory token sequences: per-position ids of the released
    (n−1)-grams, from which level-n candidates are read off in vectorised passes."""

    def __init__(self, corpus: TokenCorpus, mech: DPNE):
        self.corpus, self.mech, self.joiner = corpus, mech, corpus.joiner
        self.pos_user = np.repeat(corpus.seq_user, np.diff(corpus.seq_ptr))
        # position i's sequence end, to keep n-grams inside their sequence
        self.seq_end = np.repeat(corpus.seq_ptr[1:], np.diff(corpus.seq_ptr))
        self.s_prev: np.ndarray | None = None   # id in S_{n−1} of the (n−1)-gram at i, or −1
        self.prev: list[str] = []

    def level_weights(self, n: int, key: bytes) -> tuple[list[str], np.ndarray]:
        """Positive level-n weights (user weights 1/√k on ≤ Δ0 candidates each)."""
        strings = self.corpus.vocab.strings
        if n == 1:
            cand = self.corpus.tokens.astype(np.int64)
            name = lambda keys: [strings[int(k)] for k in keys]  # noqa: E731
        else:
            s, m = self.s_prev, len(self.prev)
            cand = np.full(s.size, -1, dtype=np.int64)
            i = np.arange(s.size - 1)
            ok = (s[:-1] >= 0) & (s[1:] >= 0) & (i + n <= self.seq_end[:-1])
            cand[:-1][ok] = s[:-1][ok] * m + s[1:][ok]
            join = CandidateJoin(self.prev, self.joiner)
            name = lambda keys: [join.name_of(int(k) // m, int(k) % m) for k in keys]  # noqa: E731
        self._cand = cand
        level, _ = _level_itemsets(self.corpus, cand, self.pos_user, name)
        b = bound_itemsets(level, key, self.mech.max_items_per_user,
                           mode=0 if self.mech.sampling == "uniform" else 1)
        w = spread_weights(b, len(level.vocab), 0.5)
        pos = np.flatnonzero(w > 0)
        return [level.vocab[int(i)] for i in pos], w[pos]

    def set_released(self, n: int, grams: list[str]) -> None:
        """S_n (sorted strings): mark the positions whose n-gram was released."""
        if n == 1:  # keys are token ids: a lookup table
            table = np.full(len(self.corpus.vocab), -1, dtype=np.int64)
            ids = np.array([self.corpus.vocab.get(g, -1) for g in grams], dtype=np.int64)
            table[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
            s = table[self.corpus.tokens]
        else:
            join = CandidateJoin(self.prev, self.joiner)
            keys = np.array([join.key_of(g) for g in grams], dtype=np.int64)
            cand = self._cand
            s = np.full(cand.size, -1, dtype=np.int64)
            valid = np.flatnonzero(cand >= 0)
            if keys.size and valid.size:
                order = np.argsort(keys)
                sorted_keys = keys[order]
                idx = np.minimum(np.searchsorted(sorted_keys, cand[valid]), sorted_keys.size - 1)
                hit = sorted_keys[idx] == cand[valid]
                s[valid[hit]] = order[idx[hit]]
        self.s_prev, self.prev = s, list(grams)

    def set_released_strings(self, n: int, grams: list[str]) -> None:
        """Set S_n from strings directly (tests): a slow pass over all positions."""
        toks, strings, j = self.corpus.tokens, self.corpus.vocab.strings, self.joiner
        index = {g: i for i, g in enumerate(grams)}
        s = np.full(toks.size, -1, dtype=np.int64)
        for i in range(toks.size - n + 1):
            if i + n <= self.seq_end[i]:
                s[i] = index.get(j.join(strings[t] for t in toks[i:i + n]), -1)
        self.s_prev, self.prev = s, list(grams)
