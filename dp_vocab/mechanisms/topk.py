"""Fixed-size vocabularies: a private candidate set, then one-shot Gumbel top-k.

Proof: topk.md (beside this module).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from ..privacy import calibrate
from ..privacy.accounting import Stage, zcdp_rho_for
from ..privacy.noise import RandomSource, gumbel
from ..privacy.params import (DELTA_MIN, EPSILON_RANGE, check_choice, check_positive_int,
                              check_real)
from .base import Mechanism, Selection
from .claim import Noise, Sensitivity
from .count import CountGaussian, CountLaplace
from .greedy import GW
from .partition import PartitionOptimal
from .policy import PolicyGaussian, PolicyLaplace
from .sips import DPSIPS
from .weighted import WeightedGaussian, WeightedLaplace

# set-union mechanisms that can give the candidates (by name, as recipes give them)
CANDIDATES: dict[str, type[Mechanism]] = {
    cls.name: cls for cls in (CountLaplace, CountGaussian, WeightedLaplace, WeightedGaussian,
                              PolicyLaplace, PolicyGaussian, GW, PartitionOptimal, DPSIPS)}


@dataclass(frozen=True, kw_only=True, repr=False)
class TopK(Mechanism):
    """Exactly k items (or all candidates if fewer). Privacy claim:

    - stage A: the ``candidates`` mechanism with (f·ε, δ/2) releases a candidate set C;
    - stage B: scores h_u = number of users holding u ∈ C (unbounded: every count moves by ≤ 1,
      all in the same direction, so no cap is needed); one-shot Gumbel(1/ε₁) top-k equals k-fold
      peeling of the exponential mechanism exp(ε₁ h_u) (Durfee & Rogers 2019), each pick ε₁-DP
      and ε₁²/8-zCDP; ε₁ is the larger of (1−f)ε/k (pure composition) and √(8ρ/k) with ρ the
      zCDP budget worth ((1−f)ε, δ/2);
    - total: stage A + stage B by composition (the ledger shows both).
    """

    name = "top_k"
    summary = "exactly k items: private candidates, then one-shot Gumbel top-k by user counts"
    noise = Noise.OTHER

    def sensitivity(self) -> Sensitivity:  # the histogram is stage A's; stage B: see topk.md
        a = self.stage_a.sensitivity()
        return dataclasses.replace(a, text=f"stage A: {a.text}; stage B: user counts, "
                                           f"Linf = 1, monotone")

    k: int
    candidates: str = "policy_gaussian"
    candidate_budget: float = 0.5
    sampling: str = field(default="uniform", init=False)
    stage_a: Mechanism = field(init=False)
    pick_epsilon: float = field(init=False)
    pick_route: str = field(init=False)
    gumbel_scale: float = field(init=False)

    def _validate(self) -> None:
        super()._validate()
        self._set("k", check_positive_int(self.k, "k", maximum=10_000_000))
        self._set("candidates", check_choice(self.candidates, "candidates", tuple(CANDIDATES)))
        f = check_real(self.candidate_budget, "candidate_budget", 0.0, 1.0, low_open=True,
                       high_open=True,
                       allowed="the fraction of ε for the candidate set, in (0, 1)")
        if min(f, 1.0 - f) * self.epsilon < EPSILON_RANGE[0]:   # each stage's ε must be an ε
            raise ParameterError("candidate_budget", self.candidate_budget,
                                 f"a fraction that leaves both stages an ε of at least "
                                 f"{EPSILON_RANGE[0]:g}")
        self._set("candidate_budget", f)
        if self.delta / 2 < DELTA_MIN:   # the candidate stage gets δ/2
            raise ParameterError("delta", self.delta, f"a real number from {2 * DELTA_MIN:g} "
                                 f"to 0.5 (half of it goes to the candidate stage)")

    def _calibrate(self):
        stage_a = CANDIDATES[self.candidates](epsilon=self.epsilon * self.candidate_budget,
                                              delta=self.delta / 2,
                                              max_items_per_user=self.max_items_per_user)
        eps_b, delta_b = self.epsilon * (1 - self.candidate_budget), self.delta / 2
        pure = eps_b / self.k
        zcdp = math.sqrt(8 * zcdp_rho_for(eps_b, delta_b) / self.k)
        self._set("stage_a", stage_a)
        # ε₁ rounded down and the Gumbel scale 1/ε₁ up (calibrate.MARGIN)
        self._set("pick_epsilon", calibrate.round_down(max(pure, zcdp)))
        self._set("pick_route", "pure" if pure >= zcdp else "zcdp")
        self._set("threshold", stage_a.threshold)
        self._set("noise_scale", stage_a.noise_scale)
        self._set("gumbel_scale", calibrate.round_up(1.0 / self.pick_epsilon))

    @property
    def noise_multiplier(self):
        return None

    def params(self):
        return {"epsilon": self.epsilon, "delta": self.delta, "k": self.k,
                "candidates": self.candidates, "candidate_budget": self.candidate_budget,
                "max_items_per_user": self.max_items_per_user}

    def privacy(self):
        return {**super().privacy(), "candidate_stage": self.stage_a.privacy(),
                "pick_epsilon": self.pick_epsilon, "pick_accounting": self.pick_route,
                "gumbel_scale": self.gumbel_scale}

    def stages(self) -> list[Stage]:
        eps_b = self.epsilon * (1 - self.candidate_budget)
        b = Stage(name="top_k", mechanism=self.registry_name, epsilon=eps_b,
                  delta=0.0 if self.pick_route == "pure" else self.delta / 2, noise="other")
        return [self.stage_a.stage("candidates"), b]

    @property
    def delta_threshold(self) -> float:   # the candidate stage decides what may appear
        return self.stage_a.delta_threshold

    def stage(self, name: str = "selection") -> Stage:
        a, b = self.stages()
        return Stage(name=name, mechanism=self.registry_name, epsilon=a.epsilon + b.epsilon,
                     delta=a.delta + b.delta, noise="other")

    def histogram(self, itemsets, key):
        return self.stage_a.histogram(itemsets, key)

    def bounded_sets(self, itemsets, key):
        return self.stage_a.bounded_sets(itemsets, key)

    @property
    def support(self):
        return self.stage_a.support

    def release_probability(self, weights):
        return self.stage_a.release_probability(weights)

    def _select(self, data, key: bytes, random: RandomSource) -> Selection:
        """Stage A's release, then the k picks among its items (in their sorted order)."""
        cand = self.stage_a.release(data, key=key, random=random).items
        if len(cand) > self.k:
            holders = data.holder_counts(cand)
            noisy = holders + gumbel(self.gumbel_scale, len(cand), random)
            top = np.argpartition(-noisy, self.k - 1)[:self.k]
            chosen = [cand[i] for i in top.tolist()]
        else:
            chosen = list(cand)
        return Selection(chosen, details={"candidates": len(cand), "k": self.k})
