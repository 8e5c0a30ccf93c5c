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
from .base import Mechanism, bound_itemsets, spread_weights
from .user_order import check_key

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
    def _weights_of(self, level: ItemSets, key: bytes) -> np.ndarray:
        b = bound_itemsets(level, key, self.max_items_per_user,
                           mode=0 if self.sampling == "uniform" else 1)
        return spread_weights(b, len(level.vocab), 0.5)

    def _level_key(self, key: bytes, n: int) -> bytes:
        import hashlib
        return hashlib.blake2b(key + n.to_bytes(2, "big"), digest_size=32).digest()

    def level_histogram(self, corpus: TokenCorpus, n: int, previous: list[str],
                        key: bytes) -> dict[str, float]:
        """Pre-noise level-n weights given the released (n−1)-grams (tests, audits)."""
        state = _LevelState(corpus)
        if n == 1:
            level, _ = state.unigrams()
        else:
            state.set_released(n - 1, previous)
            level, _ = state.candidates(n)
        w = self._weights_of(level, self._level_key(check_key(key), n))
        return {level.vocab[i]: float(w[i]) for i in np.flatnonzero(w > 0)}

    def histogram(self, corpus: TokenCorpus, key: bytes) -> dict[str, float]:
        return self.level_histogram(corpus, 1, [], key)

    def release(self, corpus: TokenCorpus, key: bytes | None = None,
                random: RandomSource | None = None) -> Release:
        if not isinstance(corpus, TokenCorpus):
            raise ParameterError("dpne input", type(corpus).__name__,
                                 "token sequences (TokenCorpus), not item sets",
                                 "Run DPNE through a recipe or extract_sequences().")
        random = random if random is not None else RandomSource()
        key = check_key(key) if key is not None else random.key()
        state = _LevelState(corpus)
        released_all: list[str] = []
        per_level = []
        previous: list[str] = []
        for n in range(1, self.max_n + 1):
            sigma = self.level_sigmas[n - 1]
            if n == 1:
                level, keys = state.unigrams()
                rho, spurious = self.threshold, []
            else:
                if not previous:
                    per_level.append({"n": n, "released": 0, "spurious": 0})
                    continue
                if len(previous) >= 2 ** (_KEY_BITS // 2):
                    raise ParameterError("dpne level", n - 1, f"fewer than {2 ** 21} released "
                                         "(n−1)-grams", "Lower epsilon or max_items_per_user.")
                level, keys = state.candidates(n)
                n_cand = state.count_candidates()
                if n_cand == 0:
                    per_level.append({"n": n, "released": 0, "spurious": 0})
                    previous = []
                    continue
                rho = sigma * float(ndtri(1 - self.eta * min(len(previous) / n_cand, 1.0)))
            w = self._weights_of(level, self._level_key(key, n))
            pos = np.flatnonzero(w > 0)
            keep = bernoulli(gaussian_release_probability(w[pos], rho, sigma), random)
            kept = [level.vocab[int(i)] for i in pos[keep]]
            kept_keys = keys[pos[keep]]
            if n >= 2:
                n_zero = n_cand - pos.size
                k = binomial(n_zero, float(gaussian_release_probability(np.zeros(1), rho, sigma)[0]),
                             random)
                sp_keys, spurious = state.sample_zero_weight(k, set(keys[pos].tolist()), random)
                kept += spurious
                kept_keys = np.concatenate([kept_keys, sp_keys])
            state.set_released_keys(n, kept, kept_keys)
            previous = kept
            released_all += kept
            per_level.append({"n": n, "released": len(kept), "spurious": len(spurious)})
        return Release(items=sorted(released_all), mechanism=self.registry_name,
                       params=self.params(), epsilon=self.epsilon, delta=self.delta,
                       randomness=random.describe(), privacy=self.privacy(),
                       ledger=[self.stage().to_dict()], details={"levels": per_level})


class _LevelState:
    """Per-position ids of the released (n−1)-grams, and the candidate join for level n."""

    def __init__(self, corpus: TokenCorpus):
        self.corpus = corpus
        self.pos_user = np.repeat(corpus.seq_user, np.diff(corpus.seq_ptr))
        # position i's sequence end, to keep n-grams inside their sequence
        self.seq_end = np.repeat(corpus.seq_ptr[1:], np.diff(corpus.seq_ptr))
        self.s_prev: np.ndarray | None = None   # id in S_{n−1} of the (n−1)-gram at i, or −1
        self.prev: list[str] = []
        self.prev_n = 0

    def unigrams(self):
        strings = self.corpus.vocab.strings
        return _level_itemsets(self.corpus, self.corpus.tokens.astype(np.int64), self.pos_user,
                               lambda keys: [strings[int(k)] for k in keys])

    def set_released(self, n: int, grams: list[str]) -> None:
        """Set S_n from strings (tests): positions whose n-gram string is in ``grams``."""
        toks, strings, j = self.corpus.tokens, self.corpus.vocab.strings, self.corpus.joiner
        index = {g: i for i, g in enumerate(grams)}
        s = np.full(toks.size, -1, dtype=np.int64)
        for i in range(toks.size - n + 1):
            if i + n <= self.seq_end[i]:
                g = j.join(strings[t] for t in toks[i:i + n])
                s[i] = index.get(g, -1)
        self.s_prev, self.prev, self.prev_n = s, list(grams), n

    def set_released_keys(self, n: int, grams: list[str], keys: np.ndarray) -> None:
        """Set S_n after a release: ``keys`` are the released candidates' keys at level n."""
        if n == 1:  # keys are token ids: a lookup table
            table = np.full(len(self.corpus.vocab), -1, dtype=np.int64)
            table[keys] = np.arange(keys.size)
            s = table[self.corpus.tokens]
        else:
            cand = self._cand
            s = np.full(cand.size, -1, dtype=np.int64)
            valid = np.flatnonzero(cand >= 0)
            if keys.size and valid.size:
                order = np.argsort(keys)
                sorted_keys = keys[order]
                idx = np.minimum(np.searchsorted(sorted_keys, cand[valid]), sorted_keys.size - 1)
                hit = sorted_keys[idx] == cand[valid]
                s[valid[hit]] = order[idx[hit]]
        self.s_prev, self.prev, self.prev_n = s, list(grams), n

    def candidates(self, n: int):
        """Level-n ItemSets of present candidates; key = id(prefix)·|S_{n−1}| + id(suffix)."""
        s, m = self.s_prev, len(self.prev)
        cand = np.full(s.size, -1, dtype=np.int64)
        i = np.arange(s.size - 1)
        ok = (s[:-1] >= 0) & (s[1:] >= 0) & (i + n <= self.seq_end[:-1])
        cand[:-1][ok] = s[:-1][ok] * m + s[1:][ok]
        self._cand = cand
        prev, j = self.prev, self.corpus.joiner
        return _level_itemsets(self.corpus, cand, self.pos_user,
                               lambda keys: [prev[int(k) // m] + j + prev[int(k) % m].rsplit(j, 1)[-1]
                                             for k in keys])

    def _groups(self):
        """(S_{n−1} ids by their last n−2 tokens, ids by their first n−2 tokens)."""
        j = self.corpus.joiner
        by_suffix, by_prefix = defaultdict(list), defaultdict(list)
        for idx, g in enumerate(self.prev):
            parts = g.split(j)
            by_suffix[j.join(parts[1:])].append(idx)
            by_prefix[j.join(parts[:-1])].append(idx)
        keys = sorted(set(by_suffix) & set(by_prefix))
        return [(by_suffix[k], by_prefix[k]) for k in keys]

    def count_candidates(self) -> int:
        """|C_n| exactly: Σ over (n−2)-grams m of #{a: a[1:] = m}·#{b: b[:-1] = m}."""
        self._blocks = self._groups()
        self._sizes = np.array([len(a) * len(b) for a, b in self._blocks], dtype=np.int64)
        return int(self._sizes.sum())

    def sample_zero_weight(self, k: int, positive: set, random: RandomSource):
        """k distinct uniform members of C_n not in ``positive`` (keys), by rejection."""
        if k == 0:
            return np.zeros(0, dtype=np.int64), []
        m, prev, j = len(self.prev), self.prev, self.corpus.joiner
        cum = np.cumsum(self._sizes)
        chosen: dict[int, str] = {}
        while len(chosen) < k:
            for r in uniform_below(int(cum[-1]), 2 * (k - len(chosen)), random).tolist():
                blk = int(np.searchsorted(cum, r, side="right"))
                off = r - (int(cum[blk - 1]) if blk else 0)
                a_ids, b_ids = self._blocks[blk]
                a, b = a_ids[off // len(b_ids)], b_ids[off % len(b_ids)]
                key = a * m + b
                if key in positive or key in chosen:
                    continue
                chosen[key] = prev[a] + j + prev[b].rsplit(j, 1)[-1]
                if len(chosen) == k:
                    break
        keys = np.fromiter(chosen, dtype=np.int64, count=len(chosen))
        return keys, list(chosen.values())
