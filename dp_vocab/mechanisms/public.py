"""A public candidate domain inside the Gaussian set-union mechanisms (proof: public.md).

A list P of items fixed from public information before any data is seen (by default wordfreq's
words for the recipe's language, normalised by the recipe's own item extractor:
``public_list.PublicDomain``) is noised as a whole, zero-weight items included. Its items then
need no δ-threshold: they are released by a weighted Benjamini-Hochberg procedure
(``weighted_bh``) at a stated false-discovery rate q, on the p-values of their noisy weights,
with weights from public rank only; by default adaptive (run at q/π̂, π̂ an estimate of the null
weight from the same p-values: public.md §9). Items outside P keep the usual threshold ρ.

- ``release_with_public_domain``: one Gaussian release (candidates and P);
- ``PublicDomainRelease``: P and how its items are released, the part each public mechanism
  holds (composition: the mechanisms keep their base mechanism's defaults and methods);
- ``PolicyGaussianPublic``, ``DPSIPSPublic`` and ``DPNEPublic`` (its level 1): the mechanisms.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..bounding import (MAX_ITEMS_PER_USER, Bounding, ItemWeights, NamesOf, UserData,
                        canonical_order)
from ..data.itemsets import item_hashes
from ..data.token_corpus import BandClasses
from ..errors import ParameterError
from ..privacy.noise import RandomSource, bernoulli, gaussian_release_probability
from ..privacy.params import check_bool, check_positive_int, check_real
from ..compiled import lazy_module
from .base import Selection
from .claim import Norm, Sensitivity
from .ngrams import DPNE
from .policy import PolicyGaussian
from .public_list import PublicDomain, check_source
from .sips import DPSIPS
from .level_fdr import check_class_power, rank_bands, rank_class_weights
from .weighted_bh import band_weights, check_bands, weighted_bh

_kernels = lazy_module("dp_vocab.mechanisms._kernels")   # numba: imported on first use

# Bands of public rank and their relative BH weights (normalised to mean 1 over P). Chosen on
# our two dev corpora only (public.md §6): common words are held in almost any corpus, so they
# get more of the false-discovery budget. The shape matters little there; equal weights
# release fewer true items with more false positives.
DEFAULT_BANDS = ((10_000, 8.0), (40_000, 4.0), (100_000, 2.0), (320_000, 0.5))

# what the record says of the sensitivity of the mechanisms built on a public domain
SENSITIVITY_TEXT = ("L2 <= 1 (l2-contractive; lone items outside the public list weigh "
                    "<= 1/sqrt(t))")


def release_with_public_domain(h: ItemWeights, domain: PublicDomain, bh_weights: np.ndarray,
                               sigma: float, threshold: float, fdr: float,
                               random: RandomSource, released_before: int = 0,
                               adaptive_lambda: float | None = None,
                               ranks: np.ndarray | None = None) -> list[str]:
    """One Gaussian release with a public domain: candidates outside P released iff
    H + N(0, σ²) > ρ (exact Bernoulli), items of P (all of them) by ``weighted_bh`` (adaptive
    if ``adaptive_lambda`` is set), counting those and the ``released_before`` items (earlier
    rounds) as other discoveries. ``ranks``: ``domain.ranks`` of h's items, if known. Returns
    the released items (unsorted)."""
    pos = ranks if ranks is not None else domain.ranks(h.hashes, h.names_at)
    outside = np.flatnonzero(pos < 0)
    keep = bernoulli(gaussian_release_probability(h.weights[outside], threshold, sigma), random)
    released = h.names_at(outside[keep])
    on_p = np.zeros(len(domain.items), dtype=np.float64)
    inside = pos >= 0
    on_p[pos[inside]] = h.weights[inside]
    chosen = weighted_bh(on_p, bh_weights, sigma, fdr, random,
                         other_discoveries=len(released) + released_before,
                         adaptive_lambda=adaptive_lambda)
    items = domain.items
    return released + [items[i] for i in np.flatnonzero(chosen).tolist()]


@dataclass(frozen=True)
class PublicDomainRelease:
    """P and how its items are released: weighted BH at false-discovery rate ``fdr`` with BH
    weights by public rank ``bands`` (adaptive at λ = ``lam`` if ``adaptive``), and what the
    record says of it. ``excluded``: characters no item of P may hold (DPNE's joiner).
    Built from a mechanism's validated parameters (``checked``); P is read on first use,
    since a recipe run only ever needs the normalised list (often kept on disk)."""

    source: str | Path | Sequence[str] | PublicDomain
    bands: tuple[tuple[int, float], ...]
    fdr: float
    adaptive: bool
    lam: float
    excluded: str = ""

    @classmethod
    def checked(cls, source, bands, fdr, adaptive, lam,
                excluded: str = "") -> "PublicDomainRelease":
        """The parameters validated (named as the mechanisms name them), before any data."""
        fdr = check_real(fdr, "public_fdr", 0.0, 0.5, low_open=True,
                         allowed="a false-discovery rate in (0, 0.5], e.g. 0.01")
        adaptive = check_bool(adaptive, "public_adaptive")
        lam = check_real(lam, "public_lambda", 0.0, 1.0, low_open=True, high_open=True,
                         allowed="a p-value cut λ in (0, 1), e.g. 0.5")
        bands = check_bands(bands)
        check_source(source)
        return cls(source, bands, fdr, adaptive, lam, excluded)

    @property
    def limit(self) -> int:
        """The most items P keeps: the rank limit of the last band."""
        return int(self.bands[-1][0])

    def raw(self) -> PublicDomain:
        """P as given or read from its source, before any extractor or mechanism filters it."""
        if isinstance(self.source, PublicDomain):
            return self.source
        return PublicDomain.load(self.source, self.limit)

    @functools.cached_property
    def domain(self) -> PublicDomain:
        """P as released (read on first use)."""
        return self.raw().without_characters(self.excluded)

    def normalised_for(self, extractor) -> PublicDomain:
        """P holding only what ``extractor`` yields as one item equal to itself (kept on disk
        between runs: ``PublicDomain.normalised_from``)."""
        return PublicDomain.normalised_from(self.source, extractor, self.limit, self.raw)

    @property
    def adaptive_lambda(self) -> float | None:
        """λ of adaptive BH (public.md §9), or None for plain weighted BH."""
        return self.lam if self.adaptive else None

    def release(self, h: ItemWeights, sigma: float, threshold: float, random: RandomSource,
                ranks: np.ndarray | None = None) -> list[str]:
        """One release of the candidates ``h`` and of P (``release_with_public_domain``)."""
        return release_with_public_domain(
            h, self.domain, band_weights(len(self.domain.items), self.bands), sigma, threshold,
            self.fdr, random, adaptive_lambda=self.adaptive_lambda, ranks=ranks)

    def release_rest(self, h: ItemWeights, released: set[str], sigma: float,
                     threshold: float, random: RandomSource) -> list[str]:
        """As ``release``, over P minus the items ``released`` before (fixed by the earlier
        output), which count as discoveries; BH weights by each remaining item's public rank,
        rescaled to mean 1 over the rest."""
        domain = self.domain
        rest = PublicDomain(tuple(x for x in domain.items if x not in released),
                            domain.source, domain.normalised)
        full = band_weights(len(domain.items), self.bands)
        index = domain.index
        w = full[[index[x] for x in rest.items]] if rest.items else full[:0]
        w = w * (w.size / w.sum()) if w.size and w.sum() > 0 else w
        return release_with_public_domain(h, rest, w, sigma, threshold, self.fdr, random,
                                          released_before=len(released),
                                          adaptive_lambda=self.adaptive_lambda)

    def params(self) -> dict:
        return {"public_items": self.domain.source,
                "public_bands": [list(b) for b in self.bands],
                "public_fdr": self.fdr, "public_adaptive": self.adaptive,
                "public_lambda": self.lam}

    def privacy(self) -> dict:
        how = (f"adaptive (Storey-type, λ = {self.lam:g}) weighted Benjamini-Hochberg"
               if self.adaptive else "weighted Benjamini-Hochberg")
        return {"public_domain": self.domain.describe(),
                "public_release": f"{how} at false-discovery rate "
                                  f"{self.fdr:g} over every item of the public list "
                                  f"(zero weights included); BH weights by public rank band",
                "release_decisions": "exact Bernoulli draws of closed-form probabilities "
                                     "(no noise value is materialised)"}


# ---- the mechanisms' parameters ------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True, repr=False)
class PublicListParameters:
    """The parameters of a public list, declared beside a base mechanism's (fields only: not
    a Mechanism, so the base mechanism's defaults and methods stay its own). ``public``: the
    release they describe, built by the mechanism when it validates them."""

    public_items: str | Path | Sequence[str] | PublicDomain = "wordfreq:en"
    public_bands: Sequence[Sequence[float]] = DEFAULT_BANDS
    # 0.8%: the bound is on the expected share; a margin keeps single runs under 1% (public.md §6)
    public_fdr: float = 0.008
    public_adaptive: bool = True    # Storey-type adaptive BH (public.md §9, measured §6)
    public_lambda: float = 0.5
    public: PublicDomainRelease = field(init=False, repr=False, compare=False)

    @property
    def domain(self) -> PublicDomain:
        return self.public.domain

    @property
    def public_item_set(self) -> frozenset[str]:
        return self.public.domain.item_set


@dataclass(frozen=True, kw_only=True, repr=False)
class PublicCutoffParameters(PublicListParameters):
    """With the policy's cutoff of public items, (public_cutoff + α)·σ, σ the noise of the
    release (of level 1 for DPNE) that tests them (public.md §1), and the cap on a user's items
    outside P (public.md §10)."""

    public_cutoff: float = 3.0
    # a user's items outside P, capped apart (public.md §10): ρ then maximises over t ≤ 10
    # only (for policy_gaussian_public at ε = 3 its t = 1 value, δ = 1e-5; DPNE's level 1, with
    # its larger σ_1, reaches its maximum at t = 10)
    max_outside_items: int | None = 10


def checked_public(p: PublicListParameters, excluded: str = "") -> dict[str, object]:
    """The list's parameters validated, and ``public``, the release they describe: the
    values a mechanism sets (named as its fields)."""
    public = PublicDomainRelease.checked(p.public_items, p.public_bands, p.public_fdr,
                                         p.public_adaptive, p.public_lambda, excluded)
    return {"public": public, "public_fdr": public.fdr, "public_adaptive": public.adaptive,
            "public_lambda": public.lam, "public_bands": public.bands}


def checked_cutoff(p: PublicCutoffParameters, alpha: float) -> dict[str, object]:
    """``public_cutoff`` (with the policy's α) and ``max_outside_items`` validated."""
    expected = ("a number of σ from -1000 to 1000 with public_cutoff + alpha >= 0.001 (the "
                "cutoff of public items is (public_cutoff + alpha)·σ)")
    c = check_real(p.public_cutoff, "public_cutoff", -1e3, 1e3, allowed=expected)
    if not c + alpha >= 1e-3:
        raise ParameterError("public_cutoff", p.public_cutoff, expected)
    cap = p.max_outside_items
    if cap is not None:
        cap = check_positive_int(cap, "max_outside_items", maximum=MAX_ITEMS_PER_USER)
    return {"public_cutoff": c, "max_outside_items": cap}


def lone_items(max_outside_items: int | None, max_items_per_user: int) -> int:
    """The t of ρ's max: Δ0, or fewer when items outside P are capped more tightly."""
    if max_outside_items is None:
        return max_items_per_user
    return min(max_outside_items, max_items_per_user)


def outside_capped(p: PublicCutoffParameters, bounding: Bounding) -> Bounding:
    """``bounding`` after keeping ≤ ``max_outside_items`` items outside P a user."""
    if p.max_outside_items is None:
        return bounding
    return replace(bounding, max_outside=p.max_outside_items, listed=p.domain)


def cutoff_params(p: PublicCutoffParameters) -> dict:
    return {"public_cutoff": p.public_cutoff, "max_outside_items": p.max_outside_items}


def cutoff_privacy(p: PublicCutoffParameters, lone: int) -> dict:
    """What the record says of the outside cap; ``lone``: the t it lets ρ cover."""
    if p.max_outside_items is None:
        return {}
    return {"items_outside_public_list": (
        f"each user keeps at most {p.max_outside_items} (its most frequent), so the "
        f"threshold covers t <= {lone} lone items")}


# ---- the mechanisms --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedWeights(ItemWeights):
    """Candidates with their public ranks (−1 outside P)."""

    ranks: np.ndarray


@dataclass(frozen=True, kw_only=True, repr=False)
class PolicyGaussianPublic(PublicCutoffParameters, PolicyGaussian):
    """Policy Gaussian with a public domain. Privacy claim (public.md):

    - bounding: each user keeps ≤ K = ``max_outside_items`` of its items outside P (its most
      frequent; §10), then ≤ Δ0;
    - L2-descent with per-item cutoffs Γ_x = (public_cutoff + α)·σ on P, ρ + α·σ elsewhere:
      ‖H(D) − H(D′)‖₂ ≤ 1, X's t ≤ min(K, Δ0) unique items outside P weigh ≤ 1/√t;
    - noise N(0, σ²), σ = σ_AGM(ε, δ/2; 1), on every candidate and every item of P;
    - outside P: threshold ρ = max_{t ≤ min(K, Δ0)} [1/√t − σΦ⁻¹(δ_t(δ/2))]; on P: adaptive
      weighted BH at q/π̂, π̂ the weighted Storey estimate at ``public_lambda`` (§9;
      ``public_adaptive=False``: plain weighted BH at q);
    - guarantee: (ε, δ/2 + δ/2)-DP; false-discovery rate over the release ≤ q.
    """

    name = "policy_gaussian_public"
    summary = "Policy Gaussian + public domain (weighted BH at FDR q on a public list)"

    # with the outside cap, α = 2 outside P (cutoff ρ + 2σ), 8σ on P and λ = 0.95 release more
    # on both dev corpora at both δ than Policy Gaussian's α = 5 (public.md §10)
    alpha: float = 2.0
    public_cutoff: float = 6.0
    public_lambda: float = 0.95
    public_gamma: float = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        for name, value in {**checked_public(self), **checked_cutoff(self, self.alpha)}.items():
            self._set(name, value)

    @property
    def max_lone_items(self) -> int:
        return lone_items(self.max_outside_items, self.max_items_per_user)

    def for_extractor(self, extractor) -> "PolicyGaussianPublic":
        """This mechanism with P normalised by ``extractor`` (a new instance)."""
        return replace(self, public_items=self.public.normalised_for(extractor))

    @property
    def bounding(self) -> Bounding:
        """Δ0 as Policy Gaussian, after keeping ≤ ``max_outside_items`` items outside P."""
        return outside_capped(self, super().bounding)

    def _calibrate(self):
        super()._calibrate()
        self._set("public_gamma", (self.public_cutoff + self.alpha) * self.noise_scale)

    def params(self):
        return {**super().params(), **self.public.params(), **cutoff_params(self)}

    def privacy(self):
        return {**super().privacy(), **self.public.privacy(), **cutoff_privacy(self, self.max_lone_items),
                "public_items_cutoff": self.public_gamma}

    def sensitivity(self) -> Sensitivity:
        return Sensitivity(Norm.L2, 1.0, lone_item_power=0.5,
                           cap=max(self.cutoff, self.public_gamma), text=SENSITIVITY_TEXT)

    def _histogram(self, data: UserData, key: bytes) -> ListedWeights:
        """The candidates in canonical order, with their public ranks (−1 outside P)."""
        rows = data.bounded_rows(key, self.bounding)
        ranks = rows.bounded.listed_ranks   # looked up by the outside cap, if it ran here
        if ranks is None:
            ranks = self.domain.ranks(rows.hashes, rows.names_of)
        gammas = np.where(ranks >= 0, self.public_gamma, self.cutoff)
        b = rows.bounded
        weights = _kernels.l2_descent_cutoffs(b.order, b.indptr, b.items, rows.n_items, gammas)
        cand = np.flatnonzero(weights > 0)
        cand = cand[canonical_order(rows.hashes[cand])]   # what .canonical() gives, one pass
        return ListedWeights(NamesOf(rows.names_of, cand), rows.hashes[cand], weights[cand],
                             ranks[cand])

    def _select(self, data: UserData, key: bytes, random: RandomSource) -> Selection:
        h = self._histogram(data, key)
        return Selection(self.public.release(h, self.noise_scale, self.threshold, random,
                                             ranks=h.ranks))


@dataclass(frozen=True, kw_only=True, repr=False)
class DPSIPSPublic(PublicListParameters, DPSIPS):
    """DP-SIPS with a public domain. Privacy claim (public.md §4): rounds 1..R−1 as DP-SIPS;
    the last round releases the candidates outside P by its threshold τ_R and the items of P
    not yet released by (adaptive, §9) weighted BH at q (earlier releases counted as
    discoveries), all with its σ_R. Guarantee (ε, δ)-DP as DP-SIPS; false-discovery rate over
    the whole release ≤ q (only the last round can release an item nobody holds)."""

    name = "dp_sips_public"
    summary = "DP-SIPS + public domain (weighted BH at FDR q in the last round)"

    def _validate(self) -> None:
        super()._validate()
        for name, value in checked_public(self).items():
            self._set(name, value)

    def for_extractor(self, extractor) -> "DPSIPSPublic":
        """This mechanism with P normalised by ``extractor`` (a new instance)."""
        return replace(self, public_items=self.public.normalised_for(extractor))

    def params(self):
        return {**super().params(), **self.public.params()}

    def privacy(self):
        return {**super().privacy(), **self.public.privacy()}

    def sensitivity(self) -> Sensitivity:
        s = super().sensitivity()
        return Sensitivity(s.norm, s.bound, s.monotone, s.lone_item_power, exact=s.exact,
                           text=self.scope + SENSITIVITY_TEXT)

    def _decide_round(self, h: ItemWeights, r: int, removed: set[str],
                      random: RandomSource) -> list[str]:
        if r < self.rounds:
            return super()._decide_round(h, r, removed, random)
        return self.public.release_rest(h, removed, self.round_sigmas[r - 1],
                                        self.round_thresholds[r - 1], random)


@dataclass(frozen=True, kw_only=True, repr=False)
class DPNEPublic(PublicCutoffParameters, DPNE):
    """DPNE whose level 1 has a public domain (ngrams.md §1b, public.md). Privacy claim:

    - level 1 is ``policy_gaussian_public``'s release with σ_1 and ρ_1: each user keeps its
      unigrams in P and ≤ K = ``max_outside_items`` others (its most frequent), then Δ0; with
      the L2-descent policy, per-item cutoffs (public_cutoff + α)·σ_1 on P and ρ_1 + α·σ_1
      elsewhere; every item of P noised; P by (adaptive) weighted BH at q, the rest by
      ρ_1 = max_{t ≤ min(K, Δ0)} [1/√t − σ_1Φ⁻¹(δ_t(δ/2))] (δ/2 for X's unigrams outside P);
    - levels n ≥ 2 unchanged (public candidates C_n from the released (n−1)-grams); with
      ``total_fdr`` Q, level 1 is charged ``public_fdr`` of it (ngrams.md §3c); with
      ``level2_rank_power`` γ, level 2's BH is weighted by classes of band pairs of public rank,
      weights ∝ (r_a·r_b)^−γ, functions of S_1 and P only: the same bound per level and the
      same Gaussian vector (§3d);
    - guarantee: (ε, δ/2 + δ/2)-DP, the levels composing as one Gaussian with σ*.

    A list item holding a character of the joiner of the n-grams could also be released as an
    n-gram (two levels, one string), so it is dropped wherever the list becomes the domain: by
    ``for_extractor`` (the extractor's joiner), by ``for_data`` (the data's) and, for a list
    not yet given one, for the default joiner " ".
    """

    name = "dpne_public"
    summary = "DPNE with a public word list at level 1 (weighted BH at FDR q)"

    # level 2 by weighted BH, classes of band pairs of public rank with weights
    # ∝ (r_a·r_b)^−γ (ngrams.md §3d); None: plain BH
    level2_rank_power: float | None = None

    def _validate(self) -> None:
        super()._validate()
        self._set("level2_rank_power", check_class_power(
            self.level2_rank_power, "level2_rank_power", self.level_fdr))
        # a list already made the domain (``for_extractor``, ``for_data``) holds no joiner
        excluded = "" if isinstance(self.public_items, PublicDomain) else " "
        for name, value in {**checked_public(self, excluded),
                            **checked_cutoff(self, self.alpha)}.items():
            self._set(name, value)
        if self.total_fdr is not None and not self.total_fdr > self.public_fdr:
            raise ParameterError("total_fdr", self.total_fdr,
                                 f"a rate above public_fdr ({self.public_fdr:g}), which level "
                                 "1's public list spends of it (ngrams.md §3c)",
                                 "Raise total_fdr, lower public_fdr, or set total_fdr to null.")

    @property
    def level1_fdr(self) -> float:
        """Level 1's BH rate on the list bounds its expected share of unigrams nobody holds
        (public.md §5, §9): the whole-release bound is charged that much."""
        return self.public_fdr

    @property
    def max_lone_items(self) -> int:
        return lone_items(self.max_outside_items, self.max_items_per_user)

    def for_extractor(self, extractor) -> "DPNEPublic":
        """This mechanism with P normalised by ``extractor``, without its joiner's characters
        (a new instance)."""
        domain = self.public.normalised_for(extractor)
        return replace(self, public_items=domain.without_characters(
            getattr(extractor, "joiner", " ")))

    def for_data(self, data) -> "DPNEPublic":
        """This mechanism with P free of the characters of ``data``'s joiner: itself if it is
        already; a list read from its source is read again (the default joiner may have
        removed items this one keeps)."""
        joiner = getattr(data, "joiner", " ")
        given = isinstance(self.public_items, PublicDomain)
        base = self.domain if given or joiner == " " else self.public.raw()
        domain = base.without_characters(joiner)
        return self if domain is self.domain else replace(self, public_items=domain)

    def _bounding(self, n: int) -> Bounding:
        """Level 1 keeps ≤ ``max_outside_items`` unigrams outside P a user (public.md §10),
        so ρ_1 covers that many lone unigrams; levels n ≥ 2 as DPNE."""
        own = super()._bounding(n)
        return outside_capped(self, own) if n == 1 else own

    def params(self):
        extra = ({"level2_rank_power": self.level2_rank_power}
                 if self.level2_rank_power is not None else {})
        return {**super().params(), **self.public.params(), **cutoff_params(self), **extra}

    def privacy(self):
        out = {**super().privacy(), **self.public.privacy(), **cutoff_privacy(self, self.max_lone_items)}
        if self.level2_rank_power is not None:
            out["level2_weights"] = (
                "level 2 by weighted Benjamini-Hochberg: classes of pairs of decade bands of "
                f"public rank, weight proportional to (r_a*r_b)^-{self.level2_rank_power:g}, "
                "fixed by level 1's release and the public list (same Gaussian vector)")
        if self.policy == "l2_descent":   # the "weighted" policy has no cutoffs
            out["public_items_cutoff_level_1"] = \
                (self.public_cutoff + self.alpha) * self.level_sigmas[0]
        return out

    def _level_weights(self, levels, n: int, key: bytes, rho: float):
        if n != 1 or self.policy != "l2_descent":
            return super()._level_weights(levels, n, key, rho)
        grams, b = levels.level_rows(1, key)
        sigma = self.level_sigmas[0]
        listed = b.listed_ranks   # looked up by the outside cap, if it ran here
        if listed is None:
            index = self.domain.index
            listed = np.fromiter((0 if g[0] in index else -1 for g in grams), dtype=np.int64,
                                 count=len(grams))
        gammas = np.where(listed >= 0, (self.public_cutoff + self.alpha) * sigma,
                          rho + self.alpha * sigma)
        w = _kernels.l2_descent_cutoffs(b.order, b.indptr, b.items, len(grams), gammas)
        pos = np.flatnonzero(w > 0)
        return grams.subset(pos), w[pos]

    def _level_classes(self, n, join):
        """Level 2's weight classes (ngrams.md §3d): the band of public rank (decades; off the
        list: the band after it) of each pair's first and last word, and per band pair its
        exact size and BH weight ∝ (mid_i·mid_j)^−γ. Functions of S_1 and the list only, fixed
        before level 2's noise is drawn. Levels n ≥ 3 as DPNE."""
        if n != 2 or self.level2_rank_power is None:
            return super()._level_classes(n, join)
        index = self.domain.index
        prev = join.prev
        ranks = np.fromiter((index.get(g[0], -1) for g in prev), dtype=np.int64, count=len(prev))
        band, mids = rank_bands(ranks, len(self.domain.items))
        classes = BandClasses(join, band, band, mids.size)   # S_1: first token = last token
        return classes, rank_class_weights(classes.sizes, mids, self.level2_rank_power)

    def _decide_level1(self, grams, w, rho, sigma, random, join_str):
        names = [join_str(g) for g in grams]
        h = ItemWeights(names, item_hashes(names), w)
        released = self.public.release(h, sigma, rho, random)
        return [(s,) for s in released]


__all__ = ["DEFAULT_BANDS", "DPNEPublic", "DPSIPSPublic", "PolicyGaussianPublic",
           "PublicDomainRelease", "release_with_public_domain"]
