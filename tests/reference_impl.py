"""Plain-Python reference implementations, in the style of the papers' published code.

Used by tests as independent oracles and as the negative control of dp_vocab/mechanisms/policy.md §5.
Never imported by the library.
"""

from __future__ import annotations


def l1_descent_user(hist: dict, items, gamma: float) -> None:
    """Gopi et al. Alg. 3, written directly from the water-level definition."""
    live = [u for u in items if hist.get(u, 0.0) < gamma]
    gaps = sorted(gamma - hist.get(u, 0.0) for u in live)
    n, rem, prev, lam = len(gaps), 1.0, 0.0, float("inf")
    for i, g in enumerate(gaps):
        cost = (g - prev) * (n - i)
        if cost <= rem:
            rem -= cost
            prev = g
        else:
            lam = prev + rem / (n - i)
            break
    fill = lam if lam == float("inf") else prev  # the gaps paid in full (same as g <= λ*)
    for u in live:
        g = gamma - hist.get(u, 0.0)
        hist[u] = gamma if g <= fill else hist.get(u, 0.0) + lam


def l2_descent_user(hist: dict, items, gamma: float) -> None:
    live = [u for u in items if hist.get(u, 0.0) < gamma]
    z = sum((gamma - hist.get(u, 0.0)) ** 2 for u in live) ** 0.5
    for u in live:
        h = hist.get(u, 0.0)
        hist[u] = gamma if z <= 1 else h + (gamma - h) / z


def greedy_fixed_order_user(hist: dict, ordered_items, gamma: float) -> None:
    """GW's update: fill items to Γ in the user's own fixed priority order with budget 1."""
    budget = 1.0
    for u in ordered_items:
        h = hist.get(u, 0.0)
        hist.setdefault(u, 0.0)
        if h >= gamma:
            continue
        cost = gamma - h
        if cost <= budget:
            hist[u] = gamma
            budget -= cost
        else:
            hist[u] = h + budget
            break


def greedy_by_gap_user(hist: dict, items, gamma: float) -> None:
    """Gopi's greedy policy: fill the items closest to Γ first. NOT DP (order depends on H)."""
    order = sorted(items, key=lambda u: (gamma - hist.get(u, 0.0), u))
    greedy_fixed_order_user(hist, [u for u in order if hist.get(u, 0.0) < gamma], gamma)


def run_policy(update, users: list[list[str]], gamma: float) -> dict:
    hist: dict = {}
    for items in users:
        update(hist, items, gamma)
    return hist


def published_gw(epsilon: float, delta: float, alpha: float = 3.0):
    """GW exactly as published (Carvalho et al. code): no cap, every held item of every user is
    a candidate (zero weights included), threshold ρ_GW = 1 − ln(2δ)/ε. NOT DP (greedy.md §5)."""
    import math

    from dp_vocab.bounding import MAX_ITEMS_PER_USER
    from dp_vocab.mechanisms.greedy import GW

    class PublishedGW(GW):
        name = "gw_as_published"

        def _calibrate(self):
            rho = 1 - math.log(2 * self.delta) / self.epsilon
            self._set("noise_scale", 1 / self.epsilon)
            self._set("threshold", rho)
            self._set("cutoff", rho + self.alpha / self.epsilon)

    # "no cap": the largest Δ0 we accept, far above any audit's canary size
    return PublishedGW(epsilon=epsilon, delta=delta, max_items_per_user=MAX_ITEMS_PER_USER,
                       alpha=alpha)
