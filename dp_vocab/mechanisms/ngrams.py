"""DPNE: differentially private n-gram extraction (Kim, Gopi, Kulkarni, Yekhanin, NeurIPS 2021; §8).

Levels n = 1..T. Level 1 is a Weighted Gaussian over unigrams. Level n ≥ 2 only considers
candidates C_n = {g : g[:-1] ∈ S_{n−1} and g[1:] ∈ S_{n−1}}, a set fixed by the (already public)
previous level, so it is a Gaussian mechanism over a public domain: every candidate is noised,
zero weights included. We do that exactly, where the published code approximates: |C_n| is
counted exactly (a join of S_{n−1} with itself on the overlapping (n−2)-gram) and the released
zero-weight candidates are K ~ Binomial(|C_n| − |supp W_n|, Φ(−ρ_n/σ_n)) uniform members of
C_n \\ supp W_n.

n-grams are tuples of tokens from end to end; they are joined into strings (``joiner``) only to
hash and to output them. The extractor drops tokens that contain the joiner wherever it forms
n-grams, so joining is one-to-one and a released string has exactly one level.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from scipy.special import ndtri

from ..errors import ParameterError
from ..extraction import TokenCorpus
from ..itemsets import ItemSets, Vocabulary, item_hashes
from ..privacy import calibrate
from ..privacy.noise import (RandomSource, bernoulli, binomial, gaussian_release_probability,
                             uniform_below)
from ..privacy.params import check_positive_int
from ..release import Release
from .base import Mechanism, bound_itemsets, spread_weights
from .user_order import check_key, derive_key

Gram = tuple[str, ...]   # an n-gram: its tokens


def _level_itemsets(corpus: TokenCorpus, cand: np.ndarray, pos_user: np.ndarray, names_of):
    """Per-user distinct candidates from per-position candidate keys (−1: none).

    Returns (ItemSets over this level's present candidates, their sorted int64 keys)."""
    valid = np.flatnonzero(cand >= 0)
    users, keys_at = pos_user[valid].astype(np.int64), cand[valid]
    order = np.lexsort((keys_at, users))          # by user, then key: any number of users
    users, keys_at = users[order], keys_at[order]
    new = np.ones(users.size, dtype=bool)
    new[1:] = (users[1:] != users[:-1]) | (keys_at[1:] != keys_at[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, users.size))
    keys, item_ids = np.unique(keys_at[starts], return_inverse=True)
    indptr = np.zeros(corpus.n_users + 1, dtype=np.int64)
    np.cumsum(np.bincount(users[starts], minlength=corpus.n_users), out=indptr[1:])
    vocab = Vocabulary(names_of(keys))
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
        self._set("max_n", check_positive_int(max_n, "max_n", maximum=64))
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

    def level_histogram(self, data, n: int, previous: list,
                        key: bytes) -> dict[str, float]:
        """Pre-noise level-n weights, by joined n-gram, given the released (n−1)-grams as
        token tuples or joined strings (tests, audits). Private: never for output."""
        levels = self._levels(data)
        if n > 1:
            grams = [g if isinstance(g, tuple) else tuple(g.split(levels.joiner))
                     for g in previous]
            levels.set_released_grams(n - 1, sorted(grams))
        grams, w = levels.level_weights(n, self._level_key(check_key(key), n))
        return dict(zip((levels.joiner.join(g) for g in grams), w.tolist()))

    def histogram(self, data, key: bytes) -> dict[str, float]:
        return self.level_histogram(data, 1, [], key)

    def release(self, data, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        levels = self._levels(data)
        join_str = levels.joiner.join
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        released_all: list[str] = []
        per_level = []           # released n-grams per length: a function of the release
        previous: list[Gram] = []
        for n in range(1, self.max_n + 1):
            sigma = self.level_sigmas[n - 1]
            if n == 1:
                rho = self.threshold
            else:
                join = CandidateJoin(previous)
                if join.size == 0:
                    per_level.append({"n": n, "released": 0})
                    previous = []
                    continue
                rho = sigma * float(ndtri(1 - self.eta * min(len(previous) / join.size, 1.0)))
            grams, w = levels.level_weights(n, self._level_key(key, n))
            names = [join_str(g) for g in grams]
            order = np.argsort(item_hashes(names), kind="stable")  # same draws on any backend
            grams, w = [grams[i] for i in order.tolist()], w[order]
            keep = bernoulli(gaussian_release_probability(w, rho, sigma), random)
            kept = [g for g, k in zip(grams, keep.tolist()) if k]
            if n >= 2:  # zero-weight members of the public domain C_n, exactly
                p0 = float(gaussian_release_probability(np.zeros(1), rho, sigma)[0])
                k = binomial(join.size - len(grams), p0, random)
                kept += join.sample(k, {join.key_of(g) for g in grams}, random)
            previous = sorted(kept)
            levels.set_released(n, previous)
            released_all += [join_str(g) for g in kept]
            per_level.append({"n": n, "released": len(kept)})
        return Release(items=sorted(released_all), mechanism=self.registry_name,
                       params=self.params(), epsilon=self.epsilon, delta=self.delta,
                       randomness=random.describe(), privacy=self.privacy(),
                       ledger=[self.stage().to_dict()], details={"levels": per_level})


class CandidateJoin:
    """C_n from the released (n−1)-grams S (public, sorted): g with g[:-1] ∈ S and g[1:] ∈ S.

    Candidate key: index(g[:-1])·|S| + index(g[1:]) (int64 for |S| < 2^31). |C_n| is counted
    exactly by grouping S by the overlapping (n−2)-gram; ``sample`` draws distinct uniform
    members by rejection."""

    def __init__(self, prev: list[Gram]):
        if len(prev) >= 2 ** 31:
            raise ParameterError("dpne level size", "2^31 or more released n-grams",
                                 "fewer than 2^31", "Lower epsilon or max_items_per_user.")
        self.prev, self.m = prev, len(prev)
        self.index = {g: i for i, g in enumerate(prev)}
        by_suffix, by_prefix = defaultdict(list), defaultdict(list)
        for idx, g in enumerate(prev):
            by_suffix[g[1:]].append(idx)
            by_prefix[g[:-1]].append(idx)
        self.blocks = [(by_suffix[k], by_prefix[k]) for k in sorted(set(by_suffix) & set(by_prefix))]
        sizes = np.array([len(a) * len(b) for a, b in self.blocks], dtype=np.int64)
        self.cum = np.cumsum(sizes)
        self.size = int(self.cum[-1]) if sizes.size else 0

    def key_of(self, gram: Gram) -> int:
        """The key of a member of C_n (its prefix and suffix are in S by construction)."""
        return self.index[gram[:-1]] * self.m + self.index[gram[1:]]

    def gram_of(self, key: int) -> Gram:
        a, b = divmod(int(key), self.m)
        return self.prev[a] + self.prev[b][-1:]

    def sample(self, k: int, exclude: set, random: RandomSource) -> list[Gram]:
        chosen: dict[int, Gram] = {}
        while len(chosen) < k:
            for r in uniform_below(self.size, 2 * (k - len(chosen)), random).tolist():
                blk = int(np.searchsorted(self.cum, r, side="right"))
                off = r - (int(self.cum[blk - 1]) if blk else 0)
                a_ids, b_ids = self.blocks[blk]
                key = a_ids[off // len(b_ids)] * self.m + b_ids[off % len(b_ids)]
                if key in exclude or key in chosen:
                    continue
                chosen[key] = self.gram_of(key)
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
        self.prev: list[Gram] = []
        self._cand = np.zeros(0, dtype=np.int64)

    def level_weights(self, n: int, key: bytes) -> tuple[list[Gram], np.ndarray]:
        """Positive level-n weights (user weights 1/√k on ≤ Δ0 candidates each)."""
        strings, join_str = self.corpus.vocab.strings, self.joiner.join
        if n == 1:
            cand = self.corpus.tokens.astype(np.int64)
            grams_of = lambda keys: [(strings[int(k)],) for k in keys]  # noqa: E731
        else:
            s, m = self.s_prev, len(self.prev)
            cand = np.full(s.size, -1, dtype=np.int64)
            i = np.arange(s.size - 1)
            ok = (s[:-1] >= 0) & (s[1:] >= 0) & (i + n <= self.seq_end[:-1])
            cand[:-1][ok] = s[:-1][ok] * m + s[1:][ok]
            join = CandidateJoin(self.prev)
            grams_of = lambda keys: [join.gram_of(k) for k in keys]  # noqa: E731
        self._cand = cand
        level, keys = _level_itemsets(self.corpus, cand, self.pos_user,
                                      lambda keys: [join_str(g) for g in grams_of(keys)])
        b = bound_itemsets(level, key, self.mech.max_items_per_user,
                           mode=0 if self.mech.sampling == "uniform" else 1)
        w = spread_weights(b, len(level.vocab), 0.5)
        pos = np.flatnonzero(w > 0)
        return grams_of(keys[pos]), w[pos]

    def set_released(self, n: int, grams: list[Gram]) -> None:
        """S_n (sorted token tuples, members of the level last weighed): mark the positions
        whose n-gram was released."""
        if n == 1:  # keys are token ids: a lookup table
            table = np.full(len(self.corpus.vocab), -1, dtype=np.int64)
            ids = np.array([self.corpus.vocab.get(g[0], -1) for g in grams], dtype=np.int64)
            table[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
            s = table[self.corpus.tokens]
        else:
            join = CandidateJoin(self.prev)  # grams are members of C_n: keys, then positions
            keys = np.array([join.key_of(g) for g in grams], dtype=np.int64)
            cand = self._cand
            s = np.full(cand.size, -1, dtype=np.int64)
            valid = np.flatnonzero(cand >= 0)
            if valid.size:
                order = np.argsort(keys)
                sorted_keys = keys[order]
                idx = np.minimum(np.searchsorted(sorted_keys, cand[valid]), sorted_keys.size - 1)
                hit = sorted_keys[idx] == cand[valid]
                s[valid[hit]] = order[idx[hit]]
        self.s_prev, self.prev = s, list(grams)

    def set_released_grams(self, n: int, grams: list[Gram]) -> None:
        """Set S_n to any sorted token tuples (tests, audits): a slow pass over all positions."""
        if n == 1:
            return self.set_released(1, grams)
        toks, strings = self.corpus.tokens, self.corpus.vocab.strings
        index = {g: i for i, g in enumerate(grams)}
        s = np.full(toks.size, -1, dtype=np.int64)
        for i in range(toks.size - n + 1):
            if i + n <= self.seq_end[i]:
                s[i] = index.get(tuple(strings[t] for t in toks[i:i + n]), -1)
        self.s_prev, self.prev = s, list(grams)
