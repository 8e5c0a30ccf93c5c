"""Empirical privacy audit: run a mechanism many times on neighbouring datasets and bound ε from
below (Jagielski et al. 2020 style), and measure how often a canary user's unique items leak.

Neighbours: D' (a base dataset) and D = D' + one canary user holding ``canary_items`` items nobody
else holds. Any released canary item is an event that is impossible under D', so (ε, δ)-DP
requires P_D(canary released) ≤ δ. For every item u of the base, the event "u released" gives
ε ≥ ln((P_D(u) − δ) / P_D'(u)) and its reverse; probabilities are bounded by Clopper-Pearson
intervals at the stated confidence, so the reported ε lower bound holds with that confidence.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from pathlib import Path

from scipy.stats import beta

from .bounding import Input
from .errors import OutputError, ParameterError
from .itemsets import ItemSets
from .privacy.noise import RandomSource

MAX_CANARY_ITEMS = 10 ** 6   # memory: the canary's items are interned like any user's
MAX_RUNS = 10 ** 7


@dataclass(frozen=True)
class AuditResult:
    mechanism: str
    epsilon: float
    delta: float
    runs: int
    canary_items: int
    canary_releases: int                 # runs in which some canary item was released
    canary_rate_interval: tuple[float, float]
    epsilon_lower_bound: float           # with the stated confidence; inf if δ is violated
    confidence: float
    violation: bool

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        lo, hi = self.canary_rate_interval
        if self.violation:
            verdict = ("VIOLATION: the canary's unique items are released with probability ≥ "
                       f"{lo:.3g} > δ = {self.delta:g}")
        elif hi > self.delta:   # the interval still holds rates above δ: no test of δ at all
            verdict = (f"no violation detected, but {self.runs} runs cannot detect one at "
                       f"δ = {self.delta:g}: rates up to {hi:.3g} are still possible. About "
                       f"{math.ceil(3 / self.delta):,} runs would test δ (no canary release "
                       f"in 3/δ runs bounds the rate by δ at 95%)")
        else:
            verdict = "no violation detected (consistent with the claimed guarantee)"
        return (f"{self.mechanism} at (ε={self.epsilon:g}, δ={self.delta:g}), {self.runs} runs "
                f"per dataset, canary with {self.canary_items} unique items:\n"
                f"  canary released in {self.canary_releases}/{self.runs} runs; "
                f"{self.confidence:.0%} interval [{lo:.3g}, {hi:.3g}]\n"
                f"  empirical ε lower bound: {self.epsilon_lower_bound:.3g}\n  {verdict}")


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    a = 1 - confidence
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def default_base(n_users: int = 200) -> list[tuple[str, list[str]]]:
    """A public toy base: users sharing common words with a Zipf-like spread."""
    words = [f"w{i}" for i in range(40)]
    return [(f"base{u}", [w for i, w in enumerate(words) if (u + 1) % (i + 1) == 0])
            for u in range(n_users)]


def check_audit_parameters(canary_items: int, runs: int, confidence: float) -> None:
    """Bounds that make the audit meaningful (no runs proves nothing) and its memory finite."""
    def count(value, name, hi):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
            raise ParameterError(name, value, f"an integer from 1 to {hi:,}")
    count(canary_items, "canary_items", MAX_CANARY_ITEMS)
    count(runs, "runs", MAX_RUNS)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 < confidence < 1:
        raise ParameterError("confidence", confidence, "a number strictly between 0 and 1, "
                             "e.g. 0.95")


def check_result_path(path) -> Path:
    """The audit result file can be written: not a directory, in an existing writable folder."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"--output {path}: is a directory; give a file name, e.g. "
                          f"{path / 'audit.json'}")
    parent = path.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise OutputError(f"--output {path}: the folder {parent} does not exist or is not "
                          f"writable")
    return path


def write_result(result: "AuditResult", path) -> None:
    """Write the result as JSON atomically (a temporary file renamed into place)."""
    path = check_result_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.resolve().parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(result.to_dict(), indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise OutputError(f"--output {path}: cannot write ({e.strerror})") from None
        raise


def _data_for(mechanism):
    """Users' items as the mechanism reads them: item sets, or (n-gram mechanisms) each user's
    items as one run of tokens, so its n-grams are its consecutive items; n-grams holding a
    canary token count as canary releases, and the ε bound uses the base's single items."""
    if getattr(mechanism, "input", Input.ITEM_SETS) is Input.SEQUENCES:
        from .sequences import TokenCorpus
        return lambda users: TokenCorpus.from_user_runs(
            [(u, [list(ws)]) for u, ws in users], " ")
    return ItemSets.from_user_items


def audit(mechanism, base: list[tuple[Hashable, list[str]]] | None = None,
          canary_items: int = 1000, runs: int = 2000, confidence: float = 0.95,
          random: RandomSource | None = None) -> AuditResult:
    """Audit ``mechanism`` (anything with ``release(ItemSets, random=...)``, ``epsilon``,
    ``delta``). The base is public or synthetic: the audit prints statistics of it."""
    check_audit_parameters(canary_items, runs, confidence)
    random = random if random is not None else RandomSource()
    base_users: list[tuple[Hashable, list[str]]] = \
        list(default_base()) if base is None else list(base)
    canary = [f"canary-{i}" for i in range(canary_items)]
    data = _data_for(mechanism)
    d_prime = data(base_users)
    d = data(base_users + [("__canary__", canary)])
    canary_set = set(canary)
    # a mechanism's public item list can release items nobody holds: they are events too
    items = sorted({w for _, ws in base_users for w in ws}
                   | (getattr(mechanism, "public_item_set", frozenset()) - canary_set))
    hits_d = dict.fromkeys(items, 0)
    hits_dp = dict.fromkeys(items, 0)
    canary_hits = 0
    for _ in range(runs):
        rel = mechanism.release(d, random=random)
        released = set(rel.items)
        canary_hits += any(t in canary_set for w in released for t in w.split(" "))
        for w in released & hits_d.keys():
            hits_d[w] += 1
        for w in set(mechanism.release(d_prime, random=random).items) & hits_dp.keys():
            hits_dp[w] += 1
    delta = mechanism.delta
    eps = mechanism.epsilon
    lo, hi = clopper_pearson(canary_hits, runs, confidence)
    violation = lo > delta
    # per-item ratio bounds; the union over items costs a Bonferroni factor
    conf_item = 1 - (1 - confidence) / max(2 * len(items), 1)
    eps_lb = math.inf if violation else 0.0
    for w in items:
        p_lo, _ = clopper_pearson(hits_d[w], runs, conf_item)
        _, q_hi = clopper_pearson(hits_dp[w], runs, conf_item)
        if p_lo - delta > 0 and q_hi > 0:
            eps_lb = max(eps_lb, math.log((p_lo - delta) / q_hi))
        _, p_hi = clopper_pearson(hits_d[w], runs, conf_item)
        q_lo, _ = clopper_pearson(hits_dp[w], runs, conf_item)
        if q_lo - delta > 0 and p_hi > 0:
            eps_lb = max(eps_lb, math.log((q_lo - delta) / p_hi))
    return AuditResult(mechanism=getattr(mechanism, "registry_name", type(mechanism).__name__),
                       epsilon=eps, delta=delta, runs=runs, canary_items=canary_items,
                       canary_releases=canary_hits, canary_rate_interval=(lo, hi),
                       epsilon_lower_bound=eps_lb, confidence=confidence,
                       violation=violation or eps_lb > eps)


__all__ = ["AuditResult", "audit", "check_audit_parameters", "check_result_path",
           "clopper_pearson", "default_base", "write_result"]
