"""DPNE: differentially private n-gram extraction (Kim, Gopi, Kulkarni, Yekhanin, NeurIPS 2021).
Proof: ngrams.md (beside this module).

Levels n = 1..T. Level 1 is a Weighted Gaussian over unigrams. Level n ≥ 2 only considers
candidates C_n = {g : g[:-1] ∈ S_{n−1} and g[1:] ∈ S_{n−1}}, a set fixed by the (already public)
previous level, so it is a Gaussian mechanism over a public domain: every candidate is noised,
zero weights included. We do that exactly, where the published code approximates: |C_n| is
counted exactly (a join of S_{n−1} with itself on the overlapping (n−2)-gram) and the released
zero-weight candidates are K ~ Binomial(|C_n| − |supp W_n|, Φ(−ρ_n/σ_n)) uniform members of
C_n \\ supp W_n. With ``level_fdr`` q the level is released instead by Benjamini-Hochberg at q
over all of C_n (``level_fdr.level_bh``: the zero-weight candidates as one exact count), which
bounds the expected share of each level's release that nobody holds by q (ngrams.md §3a);
weighted BH (§3d): levels n ≥ 3 by classes of C_n's blocks (``level_block_power``), and with
``dpne_public`` level 2 by classes of public rank (``level2_rank_power``).

n-grams are tuples of tokens from end to end; they are joined into strings (``joiner``) only to
hash and to output them. The extractor drops tokens that contain the joiner wherever it forms
n-grams, so joining is one-to-one and a released string has exactly one level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.special import ndtri

from ..bounding import (MAX_ITEMS_PER_USER, Bounding, Input, NgramCandidates, NgramLevels,
                        Priority, UserData, Weighting, check_key, derive_key)
from ..errors import ParameterError
from ..privacy import calibrate
from ..privacy.noise import RandomSource, bernoulli, binomial, gaussian_release_probability
from ..privacy.params import check_choice, check_nonnegative, check_positive_int, check_real
from ..data.token_corpus import BandClasses, BlockClasses, CandidateJoin, Gram, block_shape
from ..compiled import lazy_module
from .base import Mechanism, Selection
from .claim import Noise, Norm, Sensitivity
from .level_fdr import (block_class_weights, check_class_power, check_level_fdr, class_bh,
                        level_bh, total_shares)

_kernels = lazy_module("dp_vocab.mechanisms._kernels")   # numba: imported on first use


class Level(NamedTuple):
    """One level's candidates with positive weight, in item-hash order (the same draws on any
    backend), their pre-noise weights, ρ_n and the public domain C_n (None at level 1)."""

    grams: NgramCandidates
    weights: np.ndarray
    rho: float
    join: CandidateJoin | None


@dataclass(frozen=True, kw_only=True, repr=False)
class DPNE(Mechanism):
    """DPNE with exact candidate counting and exact zero-weight sampling. Privacy claim:

    - one Gaussian budget σ* = σ_AGM(ε, δ/2; 1) split over T levels with Σ_n 1/σ_n² = 1/σ*²
      (uniform: σ_n = σ*√T; geometric base b: σ_n = σ* b^n √(Σ_i b^{−2i})): each level has L2
      sensitivity 1 (weights 1/√k_u on ≤ Δ0 items), so together they are exactly one Gaussian
      mechanism with σ*: (ε, δ/2) on the common support;
    - level 1 threshold ρ_1 = max_{1≤t≤Δ0} [1/√t − σ_1Φ⁻¹(δ_t(δ/2))]: δ/2 for X's unigrams;
    - level n ≥ 2 runs over the public domain C_n (all candidates noised), so it spends no δ;
      its rule is post-processing of the level's Gaussian vector over C_n: either the threshold
      ρ_n = σ_n Φ⁻¹(1 − η·min(|S_{n−1}|/|C_n|, 1)), which sets the expected spurious count, or
      (``level_fdr`` q) Benjamini-Hochberg at q over C_n (adaptive with ``level_fdr_lambda``
      = ½, with a whole-release term ``total_fdr`` Q), whose expected share of zero-weight
      n-grams in each level is ≤ q given the earlier levels (ngrams.md §3a), and in the whole
      release ≤ Q (§3c); ρ_n then only anchors the L2-descent cutoff; with
      ``level_block_power`` γ, BH at levels n ≥ 3 is weighted by classes of C_n's blocks
      (min(|prefixes|, |suffixes|) in powers of 2, weights ∝ min^−γ), functions of S_{n−1}
      only: the same bound and the same Gaussian vector (§3d);
    - ``policy="l2_descent"``: each level's weights come from Policy Gaussian (L2-descent in
      the order of a per-level key, cutoff Γ_n = ρ_n + α·σ_n) over the level's candidates;
      ℓ2-contraction keeps L2 sensitivity 1 per level for the same key, so all of the above
      holds unchanged;
    - guarantee: (ε, δ/2 + δ/2)-DP.
    """

    name = "dpne"
    summary = "DPNE n-gram levels up to max_n, exact candidate counts and spurious sampling"
    noise = Noise.GAUSSIAN
    weighting = Weighting.L2   # of each level's candidates (the levels weigh them)
    scope = "per level (given the earlier levels' output, over the level's candidates): "
    input = Input.SEQUENCES

    max_n: int = 5
    max_items_per_user: int = 10
    eta: float = 0.01
    budget_split: str | float = "uniform"
    sampling: str = "top"
    # how a level's weights are formed: "weighted" (each user adds 1/√k to its k capped
    # n-grams, as published) or "l2_descent" (Policy Gaussian in keyed user order, cutoff
    # Γ_n = ρ_n + α·σ_n)
    policy: str = "weighted"
    alpha: float = 5.0
    # Δ0 of the levels n ≥ 2 (their threshold does not depend on it); None: max_items_per_user
    max_ngrams_per_user: int | None = None
    # levels n ≥ 2 by Benjamini-Hochberg over C_n at this false-discovery rate (None: by ρ_n)
    level_fdr: float | None = None
    # Storey-adaptive BH at levels n ≥ 2 (λ = ½ only: drawn exactly by counting random bits)
    level_fdr_lambda: float | None = None
    # a bound on the whole release's expected false-discovery share, spent over levels 2..T
    total_fdr: float | None = None
    # levels n ≥ 3 by weighted BH, blocks of C_n in classes by min(|prefixes|, |suffixes|),
    # weights ∝ min^−γ (ngrams.md §3d); None: plain BH
    level_block_power: float | None = None
    sigma_star: float = field(init=False)
    level_sigmas: tuple[float, ...] = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("max_n", check_positive_int(self.max_n, "max_n", maximum=64))
        self._set("eta", check_real(self.eta, "eta", 0.0, 1.0, low_open=True, high_open=True,
                                    allowed="a number in (0, 1): the tolerated spurious "
                                            "fraction"))
        self._set("policy", check_choice(self.policy, "policy", ("weighted", "l2_descent")))
        self._set("alpha", check_nonnegative(self.alpha, "alpha"))
        if self.max_ngrams_per_user is not None:
            self._set("max_ngrams_per_user", check_positive_int(
                self.max_ngrams_per_user, "max_ngrams_per_user",
                maximum=MAX_ITEMS_PER_USER))
        self._set("budget_split", self._check_split(self.budget_split))
        q, lam, total = check_level_fdr(self.level_fdr, self.level_fdr_lambda, self.total_fdr)
        self._set("level_fdr", q)
        self._set("level_fdr_lambda", lam)
        self._set("total_fdr", total)
        self._set("level_block_power", check_class_power(self.level_block_power,
                                                         "level_block_power", q))

    @property
    def level1_fdr(self) -> float:
        """Level 1's bound on its expected share of n-grams nobody holds: 0, as it releases
        only held unigrams (a public list's BH charges its rate: ``DPNEPublic``)."""
        return 0.0

    @property
    def level_total_fdrs(self) -> tuple[float, ...] | None:
        """Q_2..Q_T, the whole-release bound ``total_fdr`` less level 1's charge, from a running
        remainder (ngrams.md §3c); None without ``total_fdr``."""
        if self.total_fdr is None:
            return None
        return total_shares(self.total_fdr, self.level1_fdr, self.max_n - 1)

    def _check_split(self, split):
        """'uniform', a geometric base or max_n shares; bounded so that every σ_n is finite
        (b^(2(T−1)) and the shares' spread stay within a double's range)."""
        if isinstance(split, (list, tuple)):
            expected = (f"a list of {self.max_n} positive numbers (one share per level, "
                        f"n = 1..max_n), the smallest at least 1e-12 of the largest")
            if len(split) != self.max_n:
                raise ParameterError("budget_split", split, expected)
            shares = [check_real(w, "budget_split", 0.0, math.inf, low_open=True,
                                 allowed=expected) for w in split]
            if min(shares) < 1e-12 * max(shares):
                raise ParameterError("budget_split", split, expected)
            return shares
        if isinstance(split, str):
            if split != "uniform":
                raise ParameterError("budget_split", split, "'uniform', a geometric base or a "
                                     "list of per-level shares")
            return split
        return check_real(split, "budget_split", 0.01, 100.0,
                          allowed="'uniform', a geometric base b from 0.01 to 100 (b > 1 "
                                  "favours short n-grams) or a list of per-level shares")

    def _calibrate(self):
        sigma_star = calibrate.agm_sigma(self.epsilon, self.delta / 2)
        T = self.max_n
        if self.budget_split == "uniform":
            sigmas = [sigma_star * math.sqrt(T)] * T
        elif isinstance(self.budget_split, list):   # level n gets share w_n/Σw of 1/σ*²
            top = max(self.budget_split)
            shares = [w / top for w in self.budget_split]   # in [1e-12, 1]: no overflow
            total = math.fsum(shares)
            sigmas = [sigma_star * math.sqrt(total / w) for w in shares]
        else:   # σ_n = σ*·b^n·√(Σ_i b^(−2i)) = σ*·√(Σ_i b^(2(n−i))), no overflow for b ≤ 100
            b = float(self.budget_split)
            sigmas = [sigma_star * math.sqrt(math.fsum(b ** (2 * (n - i))
                                                       for i in range(1, T + 1)))
                      for n in range(1, T + 1)]
        # each σ_n rounded up (calibrate.MARGIN): Σ 1/σ_n² ≤ 1/σ*² exactly
        sigmas = [calibrate.round_up(s) for s in sigmas]
        self._set("sigma_star", sigma_star)
        self._set("level_sigmas", tuple(sigmas))
        self._set("noise_scale", sigmas[0])
        self._set("threshold", calibrate.gaussian_threshold(sigmas[0], self.delta / 2,
                                                            self.max_lone_items))

    @property
    def noise_multiplier(self):
        return self.sigma_star

    def params(self):
        extra = {"policy": self.policy, "alpha": self.alpha} if self.policy != "weighted" else {}
        if self.max_ngrams_per_user is not None:
            extra["max_ngrams_per_user"] = self.max_ngrams_per_user
        if self.level_fdr is not None:
            extra.update({"level_fdr": self.level_fdr, "level_fdr_lambda": self.level_fdr_lambda,
                          "total_fdr": self.total_fdr})
        if self.level_block_power is not None:
            extra["level_block_power"] = self.level_block_power
        return {**super().params(), "max_n": self.max_n, "eta": self.eta,
                "budget_split": self.budget_split, **extra}

    def privacy(self):
        extra = {"cutoff": self.threshold + self.alpha * self.noise_scale,
                 "level_cutoffs": "rho_n + alpha * sigma_n"} if self.policy != "weighted" else {}
        if self.level_fdr is not None:
            how = ("adaptive (Storey-type, λ = 0.5) Benjamini-Hochberg"
                   if self.level_fdr_lambda is not None else "Benjamini-Hochberg")
            extra["level_release"] = (
                f"levels n >= 2: {how} at false-discovery rate {self.level_fdr:g} per level "
                "over every candidate of C_n (zero weights included), post-processing of the "
                "level's Gaussian vector; eta only anchors the L2-descent cutoff")
            if self.level_block_power is not None:
                extra["level_block_weights"] = (
                    "levels n >= 3 by weighted Benjamini-Hochberg: the blocks of C_n (candidates "
                    "around one (n-2)-gram) in classes by min(prefixes, suffixes) in powers of "
                    f"2, weight proportional to that min^-{self.level_block_power:g}, fixed by "
                    "S_(n-1) (same Gaussian vector)")
            if self.level_total_fdrs is not None:
                extra["level_total_fdrs"] = list(self.level_total_fdrs)
                extra["whole_release_fdr"] = (
                    f"expected share of n-grams nobody holds in the whole release <= "
                    f"{self.total_fdr:g} (level 1: {self.level1_fdr:g})")
        return {**super().privacy(), "level_sigmas": list(self.level_sigmas),
                "composed_sigma": self.sigma_star, **extra}

    def sensitivity(self) -> Sensitivity:
        if self.policy == "weighted":
            return super().sensitivity()
        return Sensitivity(Norm.L2, 1.0, lone_item_power=0.5,
                           cap=self.threshold + self.alpha * self.noise_scale,
                           text=self.scope + "L2 <= 1 (l2-contractive L2-descent in keyed order)")

    # -- levels ----------------------------------------------------------------------------
    def _level_key(self, key: bytes, n: int) -> bytes:
        return derive_key(key, n.to_bytes(2, "big"))

    def _bounding(self, n: int) -> Bounding:
        cap = self.max_items_per_user if n == 1 or self.max_ngrams_per_user is None \
            else self.max_ngrams_per_user
        return Bounding(cap, Priority.RANDOM if self.sampling == "uniform"
                        else Priority.OWN_COUNT)

    def ngram_levels(self, data: UserData) -> NgramLevels:
        """``data``'s n-gram levels, capped as level 1 is (levels n ≥ 2 may cap apart)."""
        return data.ngram_levels(self._bounding(1))

    def _level_threshold(self, n: int, previous: list, join: CandidateJoin | None) -> float:
        """ρ_n: level 1's δ-threshold; at n ≥ 2 a function of public sizes only (the expected
        number of released zero-weight candidates is about η·|S_{n−1}|)."""
        if join is None:   # level 1
            return self.threshold
        sigma = self.level_sigmas[n - 1]
        return sigma * float(ndtri(1 - self.eta * min(len(previous) / join.size, 1.0)))

    def _level_weights(self, levels, n: int, key: bytes, rho: float):
        """Level n's positive weights: the users' 1/√k sums, or the L2-descent policy over
        their capped rows in the level key's order with cutoff Γ_n = ρ_n + α·σ_n."""
        own = () if self._bounding(n) == self._bounding(1) else (self._bounding(n),)
        if self.policy == "weighted":
            return levels.level_weights(n, key, *own)
        grams, chunks = levels.level_chunks(n, key, *own)
        gamma = rho + self.alpha * self.level_sigmas[n - 1]
        hg = _kernels.descent_state(np.full(len(grams), gamma))
        for b in chunks:   # users in keyed order, a chunk at a time
            _kernels.l2_descent_rows(hg, b.order, b.indptr, b.items)
        w = _kernels.descent_weights(hg)
        pos = np.flatnonzero(w > 0)
        return grams.subset(pos), w[pos]

    def _level(self, levels: NgramLevels, n: int, previous: list[Gram],
               key: bytes) -> "Level | None":
        """Level n given S_{n−1} = ``previous`` (sorted), set on ``levels``; None if its
        candidate domain C_n is empty."""
        join = CandidateJoin(previous) if n > 1 else None
        if join is not None and join.size == 0:
            return None
        rho = self._level_threshold(n, previous, join)
        grams, w = self._level_weights(levels, n, self._level_key(key, n), rho)
        order = np.argsort(grams.hashes, kind="stable")
        return Level(grams.subset(order), w[order], rho, join)

    def level_histogram(self, levels: NgramLevels, n: int, previous: list[Gram],
                        key: bytes) -> dict[str, float]:
        """Pre-noise level-n weights, by joined n-gram, on ``levels`` whose S_{n−1} =
        ``previous`` (sorted token tuples) is set (tests, audits). Private: never for output."""
        level = self._level(levels, n, previous, check_key(key))
        if level is None:
            return {}
        return dict(zip((levels.joiner.join(g) for g in level.grams), level.weights.tolist()))

    def histogram(self, data, key: bytes) -> dict[str, float]:
        m = self.for_data(data)
        return m.level_histogram(m.ngram_levels(data), 1, [], key)

    def _decide_level1(self, grams: NgramCandidates, w: np.ndarray, rho: float, sigma: float,
                        random: RandomSource, join_str) -> list[Gram]:
        """Level 1's decisions (candidates in item-hash order): H + N(0, σ_1²) > ρ_1."""
        keep = bernoulli(gaussian_release_probability(w, rho, sigma), random)
        return [g for g, k in zip(grams, keep.tolist()) if k]

    def _decide_level(self, n: int, grams: NgramCandidates, w: np.ndarray, rho: float, sigma: float,
                      join: CandidateJoin, released_before: int,
                      random: RandomSource) -> list[Gram]:
        """Level n ≥ 2's decisions over C_n (held candidates in item-hash order): by ρ_n, or by
        BH at ``level_fdr`` with the ``released_before`` earlier n-grams as r_n; then the
        released zero-weight members of C_n, a uniform subset of the drawn size."""
        zero_weight = join.size - len(grams)
        if self.level_fdr is None:
            keep = bernoulli(gaussian_release_probability(w, rho, sigma), random)
            p0 = float(gaussian_release_probability(np.zeros(1), rho, sigma)[0])
            k = binomial(zero_weight, p0, random)
            return grams.take(np.flatnonzero(keep)) + join.sample(k, grams.sorted_keys(), random)
        totals = self.level_total_fdrs
        total = None if totals is None else totals[n - 2]
        lam = self.level_fdr_lambda
        weighted = self._level_classes(n, join)
        if weighted is None:
            keep, k = level_bh(w, join.size, sigma, self.level_fdr, random, total=total,
                               others=released_before, adaptive_lambda=lam)
            return grams.take(np.flatnonzero(keep)) + join.sample(k, grams.sorted_keys(), random)
        # weighted BH over classes of candidates (§3d)
        classes, class_weights = weighted
        keep, zero = class_bh(w, classes.class_of(grams.keys), classes.sizes, class_weights,
                              sigma, self.level_fdr, random, total=total,
                              others=released_before, adaptive_lambda=lam)
        out = grams.take(np.flatnonzero(keep))
        excluded = grams.sorted_keys()
        for j in np.flatnonzero(zero).tolist():
            out += classes.sample(int(zero[j]), j, excluded, random)
        return out

    def _level_classes(self, n: int, join: CandidateJoin
                       ) -> tuple[BandClasses | BlockClasses, np.ndarray] | None:
        """Weight classes of level n's BH (§3d) and their BH weights, or None for plain BH: at
        n ≥ 3 with ``level_block_power``, C_n's blocks by min(|prefixes|, |suffixes|), a
        function of S_{n−1} only, fixed before level n's noise is drawn."""
        if n < 3 or self.level_block_power is None:
            return None
        prefixes, suffixes = block_shape(join)
        band, weights = block_class_weights(prefixes, suffixes, self.level_block_power)
        return BlockClasses(join, band, weights.size), weights

    def _select(self, data: UserData, key: bytes, random: RandomSource) -> Selection:
        """Levels 1..T, each over the candidates the released level before allows."""
        levels = self.ngram_levels(data)
        join_str = levels.joiner.join
        released_all: list[str] = []
        per_level = []           # released n-grams per length: a function of the release
        previous: list[Gram] = []
        for n in range(1, self.max_n + 1):
            sigma = self.level_sigmas[n - 1]
            level = self._level(levels, n, previous, key)
            if level is None:
                per_level.append({"n": n, "released": 0})
                previous = []
                continue
            grams, w, rho, join = level
            if join is None:
                kept = self._decide_level1(grams, w, rho, sigma, random, join_str)
            else:
                kept = self._decide_level(n, grams, w, rho, sigma, join, len(released_all),
                                          random)
            previous = sorted(kept)
            levels.set_released(n, previous)
            released_all += [join_str(g) for g in kept]
            per_level.append({"n": n, "released": len(kept)})
        return Selection(released_all, details={"levels": per_level})
