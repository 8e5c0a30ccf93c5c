"""Empirical privacy audit: run a mechanism many times on neighbouring datasets and bound ε from
below (Jagielski et al. 2020 style), and measure how often a canary user's items leak.

Neighbours: D' (a base dataset) and D = D' + one canary user. Where its items sit
(``placement``) decides which part of the mechanism the audit sees:

- ``"unique"``: ``canary_items`` items nobody else holds, outside any public list. A released
  canary item is impossible under D', so (ε, δ)-DP requires P_D(canary released) ≤ δ: this
  tests the threshold ρ.
- ``"public"``: items of the mechanism's public list that no base user holds. Under D' they are
  noised too and can be released (weighted BH), so the event "a canary item released" is
  tested by its ratio: P_D(E) ≤ e^ε·P_D'(E) + δ. This tests the noise and BH on the list.
- ``"ngrams"`` (n-gram mechanisms): the canary holds the base's most held tokens in an order
  no base user has, so its unigrams are common but its n-grams (n ≥ 2) are its own: the
  levels n ≥ 2 see it (their zero-weight candidates can be released without it: ratio test).

For every item u of the base (and of a public list), the event "u released" gives
ε ≥ ln((P_D(u) − δ) / P_D'(u)) and its reverse; probabilities are bounded by Clopper-Pearson
intervals, Bonferroni-corrected over the events, so the reported ε lower bound holds with the
stated confidence (and so does the δ interval of the canary: a correct mechanism is flagged
with probability ≤ 2·(1 − confidence)).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass
from pathlib import Path

from scipy.stats import beta

from ..bounding import Input
from ..errors import OutputError, ParameterError
from ..data.itemsets import ItemSets
from ..privacy.noise import RandomSource

MAX_CANARY_ITEMS = 10 ** 6   # memory: the canary's items are interned like any user's
DEFAULT_CANARY_ITEMS = 1000
MAX_RUNS = 10 ** 7
PLACEMENTS = ("unique", "public", "ngrams")


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
    placement: str = "unique"
    # runs on D' (without the canary) that released one of its items: 0 for "unique"
    canary_releases_without: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        lo, hi = self.canary_rate_interval
        where = {"unique": "unique items", "public": "unique items on the public list",
                 "ngrams": "common tokens in an order nobody else has"}[self.placement]
        if self.violation and lo > self.delta and self.placement == "unique":
            verdict = ("VIOLATION: the canary's unique items are released with probability ≥ "
                       f"{lo:.3g} > δ = {self.delta:g}")
        elif self.violation:
            verdict = (f"VIOLATION: the empirical ε lower bound {self.epsilon_lower_bound:.3g} "
                       f"exceeds ε = {self.epsilon:g}")
        elif self.placement != "unique":
            verdict = ("no violation detected (consistent with the claimed guarantee; the "
                       "canary's items can be released without it, so it is tested by the "
                       "ratio of its release rates, within the ε bound)")
        elif hi > self.delta:   # the interval still holds rates above δ: no test of δ at all
            verdict = (f"no violation detected, but {self.runs} runs cannot detect one at "
                       f"δ = {self.delta:g}: rates up to {hi:.3g} are still possible. About "
                       f"{math.ceil(3 / self.delta):,} runs would test δ (no canary release "
                       f"in 3/δ runs bounds the rate by δ at 95%)")
        else:
            verdict = "no violation detected (consistent with the claimed guarantee)"
        return (f"{self.mechanism} at (ε={self.epsilon:g}, δ={self.delta:g}), {self.runs} runs "
                f"per dataset, canary with {self.canary_items} {where}:\n"
                f"  canary released in {self.canary_releases}/{self.runs} runs; "
                f"{self.confidence * 100:.6g}% interval [{lo:.3g}, {hi:.3g}]\n"
                + (f"  its items released without it in {self.canary_releases_without}/"
                   f"{self.runs} runs\n" if self.placement != "unique" else "") +
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


def check_audit_parameters(canary_items: int | None, runs: int, confidence: float,
                           placement: str = "unique") -> None:
    """Bounds that make the audit meaningful (no runs proves nothing) and its memory finite."""
    def count(value, name, hi):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
            raise ParameterError(name, value, f"an integer from 1 to {hi:,}")
    if canary_items is not None:   # None: the placement's default (``audit``)
        count(canary_items, "canary_items", MAX_CANARY_ITEMS)
    count(runs, "runs", MAX_RUNS)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 < confidence < 1:
        raise ParameterError("confidence", confidence, "a number strictly between 0 and 1, "
                             "e.g. 0.95")
    if placement not in PLACEMENTS:
        raise ParameterError("placement", placement, " or ".join(map(repr, PLACEMENTS)))


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
    if _reads_sequences(mechanism):
        from ..data.token_corpus import TokenCorpus
        return lambda users: TokenCorpus.from_user_runs(
            [(u, [list(ws)]) for u, ws in users], " ")
    return ItemSets.from_user_items


def _reads_sequences(mechanism) -> bool:
    return getattr(mechanism, "input", Input.ITEM_SETS) is Input.SEQUENCES


def _grams(run: list[str], n_min: int = 1) -> set[str]:
    """The n-grams (n ≥ n_min) of a run of tokens, joined by a space."""
    return {" ".join(run[i:j]) for i in range(len(run))
            for j in range(i + n_min, len(run) + 1)}


def _canary(mechanism, base_users, n: int | None,
            placement: str) -> tuple[list[str], frozenset[str]]:
    """(the canary's items, in order: its run of tokens for n-gram mechanisms; the released
    strings that count as the canary's: any holding a canary item, or for "ngrams" its
    n-grams (n ≥ 2) that no base user holds)."""
    held = {w for _, ws in base_users for w in ws}
    want = DEFAULT_CANARY_ITEMS if n is None else n
    if placement == "unique":
        return [f"canary-{i}" for i in range(want)], frozenset()
    if placement == "public":
        if not hasattr(mechanism, "public_item_set"):
            raise ParameterError("placement", placement, "\"unique\" or (n-gram mechanisms) "
                                 "\"ngrams\": this mechanism has no public list",
                                 "Audit a mechanism with a public list (policy_gaussian_public, "
                                 "dp_sips_public, dpne_public).")
        # public rank order; no joiner inside, so that an n-gram splits into its tokens
        free = [w for w in mechanism.domain.items if w not in held and " " not in w]
        if len(free) < want:
            raise ParameterError("canary_items", want, f"at most {len(free)}: the items of the "
                                 f"public list that no base user holds",
                                 "Lower --canary-items or give a longer public list.")
        return free[:want], frozenset()
    if not _reads_sequences(mechanism):
        raise ParameterError("placement", placement, "\"unique\" or (with a public list) "
                             "\"public\": \"ngrams\" needs an n-gram mechanism (dpne)")
    # the base's most held tokens, each next one chosen so that the pair is no base bigram
    holders: dict[str, int] = {}
    for _, ws in base_users:
        for w in set(ws):
            holders[w] = holders.get(w, 0) + 1
    base_grams: set[str] = set().union(*(_grams(list(ws), 2) for _, ws in base_users))
    common = sorted(holders, key=lambda w: (-holders[w], w))
    run = [common[0]] if common else []
    while len(run) < want:
        nxt = next((w for w in common if w not in run and f"{run[-1]} {w}" not in base_grams),
                   None)
        if nxt is None:
            break
        run.append(nxt)
    if len(run) < max(n or 2, 2):   # by default as long a run as the base allows
        raise ParameterError("canary_items", n, f"at most {len(run)} for this base: its held "
                             f"tokens must form a run whose bigrams no base user holds",
                             "Lower --canary-items.")
    return run, frozenset(_grams(run, 2) - base_grams)


def audit(mechanism, base: list[tuple[Hashable, list[str]]] | None = None,
          canary_items: int | None = None, runs: int = 2000, confidence: float = 0.95,
          random: RandomSource | None = None, placement: str = "unique",
          on_run: Callable[[int], None] | None = None) -> AuditResult:
    """Audit ``mechanism`` (anything with ``release(ItemSets, random=...)``, ``epsilon``,
    ``delta``) with the canary's items placed as ``placement`` says (module docstring). The
    base is public or synthetic: the audit prints statistics of it. ``canary_items``: None
    gives 1,000, or with ``"ngrams"`` as long a run of tokens as the base allows (at most
    1,000). ``on_run(i)`` is called after each of the ``runs`` pairs of releases."""
    check_audit_parameters(canary_items, runs, confidence, placement)
    random = random if random is not None else RandomSource()
    base_users: list[tuple[Hashable, list[str]]] = \
        list(default_base()) if base is None else list(base)
    canary, canary_grams = _canary(mechanism, base_users, canary_items, placement)
    data = _data_for(mechanism)
    d_prime = data(base_users)
    d = data(base_users + [("__canary__", canary)])
    canary_set = set(canary)

    if placement == "ngrams":
        def is_canary(w: str) -> bool:
            return w in canary_grams
    else:
        def is_canary(w: str) -> bool:
            return any(t in canary_set for t in w.split(" "))
    # a mechanism's public item list can release items nobody holds: they are events too
    # ("ngrams": the canary's tokens are base items, and it adds to them)
    items = sorted({w for _, ws in base_users for w in ws}
                   | getattr(mechanism, "public_item_set", frozenset()))
    if placement != "ngrams":
        items = [w for w in items if w not in canary_set]
    hits_d = dict.fromkeys(items, 0)
    hits_dp = dict.fromkeys(items, 0)
    canary_hits = canary_hits_without = 0
    for i in range(runs):
        released = set(mechanism.release(d, random=random).items)
        canary_hits += any(is_canary(w) for w in released)
        for w in released & hits_d.keys():
            hits_d[w] += 1
        released = set(mechanism.release(d_prime, random=random).items)
        canary_hits_without += any(is_canary(w) for w in released)
        for w in released & hits_dp.keys():
            hits_dp[w] += 1
        if on_run is not None:
            on_run(i + 1)
    delta = mechanism.delta
    eps = mechanism.epsilon
    lo, hi = clopper_pearson(canary_hits, runs, confidence)
    # "unique": the canary's items cannot be released without it (P_D' = 0 exactly)
    violation = placement == "unique" and lo > delta
    events = [(hits_d[w], hits_dp[w]) for w in items]
    if placement != "unique":
        events.append((canary_hits, canary_hits_without))
    # per-event ratio bounds, both directions; the union over events costs a Bonferroni factor
    conf_item = 1 - (1 - confidence) / max(2 * len(events), 1)
    eps_lb = math.inf if violation else 0.0
    for k_d, k_dp in events:
        p_lo, p_hi = clopper_pearson(k_d, runs, conf_item)
        q_lo, q_hi = clopper_pearson(k_dp, runs, conf_item)
        if p_lo - delta > 0 and q_hi > 0:
            eps_lb = max(eps_lb, math.log((p_lo - delta) / q_hi))
        if q_lo - delta > 0 and p_hi > 0:
            eps_lb = max(eps_lb, math.log((q_lo - delta) / p_hi))
    return AuditResult(mechanism=getattr(mechanism, "registry_name", type(mechanism).__name__),
                       epsilon=eps, delta=delta, runs=runs, canary_items=len(canary),
                       canary_releases=canary_hits, canary_rate_interval=(lo, hi),
                       epsilon_lower_bound=eps_lb, confidence=confidence,
                       violation=violation or eps_lb > eps, placement=placement,
                       canary_releases_without=canary_hits_without)


__all__ = ["PLACEMENTS", "AuditResult", "audit", "check_audit_parameters", "check_result_path",
           "clopper_pearson", "default_base", "write_result"]
