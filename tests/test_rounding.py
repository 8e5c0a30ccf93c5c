"""Floating-point margins (mechanisms/README.md §7, privacy/calibrate.py): in 80-digit arithmetic,
over a grid of (ε, δ, Δ0, K, t), the noise scales and thresholds the mechanisms actually use (doubles)
meet the claims of their proofs:

* a lone user's t items at their largest weight pass the threshold with probability at most the
  share of δ the proof assigns: 1 − Π(1 − p_i) ≤ δ_thr, both with p_i the exact closed form
  (Φ or the Laplace tail of the double-precision ρ, σ or b) and with p_i the double that the
  release actually draws its exact Bernoulli from (``release_probability``);
* weights are taken 8 ulps above 1/t, 1/√t (the policies' kernels compute them in a few
  floating-point operations);
* every Gaussian σ has δ_AGM(σ) ≤ its δ, exactly; Laplace scales are ≥ Δ/ε; split budgets
  (DP-SIPS rounds, DPNE levels) add up to no more than the whole, exactly.
"""

import math

import mpmath as mp
import numpy as np
import pytest

from dp_vocab import make_mechanism
from dp_vocab.privacy.noise import discrete_laplace_q, gaussian_release_probability

mp.mp.dps = 80
EPSILONS = [1e-4, 0.05, 0.5, 1.0, 3.0, 8.0, 100.0]
DELTAS = [0.3, 1e-3, 1e-5, 1e-8, 1e-30, 1e-100]
MAX_ITEMS = [1, 3, 100, 1000]
OUTSIDE = [1, 10]                    # K, max_outside_items
INFLATE = 1 + mp.mpf(2) ** -50       # 8 ulps
GRID = [(e, d, k) for e in EPSILONS for d in DELTAS for k in MAX_ITEMS]


def gaussian_delta(sigma, epsilon, sensitivity):
    """δ of the Gaussian mechanism at ε (Balle & Wang 2018), exactly (mpmath)."""
    s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(sensitivity)
    # two terms within ~1e15 of each other at worst on the grid: 80 digits leave 60
    return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


def any_released(probabilities_and_counts):
    """1 − Π(1 − p)^n, exactly: as −expm1(Σ n·log1p(−p)), since 1 − p would lose a tiny p
    (δ down to 1e-100) to the working precision."""
    log_keep = mp.fsum(n * mp.log1p(-mp.mpf(p)) for p, n in probabilities_and_counts)
    return -mp.expm1(log_keep)


def worst_t(float_failure, t):
    """The few t whose failure (in doubles) is largest, and both ends: the exact check runs on
    those (the exact and double failures differ by ~1e-14 relative, so the maximiser is among
    them)."""
    order = np.argsort(-float_failure, kind="stable")[:3]
    return sorted({int(t[0]), int(t[-1])} | {int(t[i]) for i in order})


def check_threshold(noise, scale, rho, share, power, t_max, release_probability):
    """t lone items at weight (1/t)^power (inflated), for every t ≤ t_max."""
    t = np.arange(1, t_max + 1, dtype=np.float64)
    w = t ** -power
    p_code = release_probability(w * (1 + 2.0 ** -50))
    fail = -np.expm1(t * np.log1p(-np.minimum(p_code, 1 - 1e-16)))
    for tt in worst_t(fail, t):
        weight = mp.mpf(float(1.0 / tt ** power)) * INFLATE
        z = (weight - mp.mpf(rho)) / mp.mpf(scale)
        exact = mp.ncdf(z) if noise == "gaussian" else (
            mp.exp(z) / 2 if z <= 0 else 1 - mp.exp(-z) / 2)
        code = float(release_probability(np.array([float(weight)]))[0])
        for p in (exact, code):
            assert any_released([(p, tt)]) <= mp.mpf(share), (tt, p, share)


def check_gaussian_sigma(sigma, epsilon, delta, sensitivity=1):
    assert gaussian_delta(sigma, epsilon, mp.sqrt(sensitivity)) <= mp.mpf(delta)


@pytest.mark.parametrize("name", ["weighted_gaussian", "policy_gaussian", "count_gaussian",
                                  "weighted_laplace", "policy_laplace", "count_laplace"])
def test_threshold_mechanisms_keep_lone_items_within_their_share(name):
    for eps, delta, d0 in GRID:
        m = make_mechanism(name, epsilon=eps, delta=delta, max_items_per_user=d0)
        count = name.startswith("count")
        share = m.delta_threshold
        assert share == (delta / 2 if m.noise == "gaussian" else delta)
        if count:   # Δ0 lone items at count 1
            p_code = float(m.release_probability(np.array([1.0]))[0])
            z = (1 - mp.mpf(m.threshold)) / mp.mpf(m.noise_scale)
            exact = mp.ncdf(z) if m.noise == "gaussian" else mp.exp(z) / 2
            for p in (exact, p_code):
                assert any_released([(p, d0)]) <= mp.mpf(share), (eps, delta, d0)
        else:
            check_threshold(m.noise, m.noise_scale, m.threshold, share,
                            0.5 if m.noise == "gaussian" else 1.0, d0, m.release_probability)
        if m.noise == "gaussian":
            check_gaussian_sigma(m.noise_scale, eps, delta / 2, d0 if count else 1)
        else:   # Laplace: b ≥ Δ1/ε
            assert mp.mpf(m.noise_scale) * mp.mpf(eps) >= (d0 if count else 1)


def test_published_counts_threshold_keeps_lone_items_within_delta():
    """count_laplace with noisy counts: integer ρ; a count-1 item passes iff Z ≥ ρ, which has
    probability q^ρ/(1+q) for the very double q the discrete Laplace draws use."""
    for eps, delta, d0 in GRID:
        m = make_mechanism("count_laplace", epsilon=eps, delta=delta, max_items_per_user=d0,
                           noisy_counts=True)
        q = mp.mpf(discrete_laplace_q(m.noise_scale))
        exact = q ** int(m.threshold) / (1 + q)
        p_code = float(m.release_probability(np.array([1.0]))[0])
        for p in (exact, p_code):
            assert any_released([(p, d0)]) <= mp.mpf(delta), (eps, delta, d0)
        # the discrete Laplace law is ε-DP for sensitivity Δ0 iff q ≥ e^{−ε/Δ0}; q is a double
        # from exp, off by ≤ 1 ulp: README §7 states the resulting ε error
        assert q >= mp.exp(-mp.mpf(eps) / d0) * (1 - mp.mpf(2) ** -52)


def test_public_threshold_covers_k_lone_items_outside_the_list():
    for eps, delta, d0 in GRID:
        for k in OUTSIDE:
            m = make_mechanism("policy_gaussian_public", epsilon=eps, delta=delta,
                               max_items_per_user=d0, max_outside_items=k,
                               public_items=["a"])
            check_threshold("gaussian", m.noise_scale, m.threshold, delta / 2, 0.5,
                            min(k, d0), m.release_probability)
            check_gaussian_sigma(m.noise_scale, eps, delta / 2)


def test_gw_threshold_keeps_one_unit_item_and_the_zero_weight_rest_within_delta():
    for eps, delta, d0 in GRID:
        m = make_mechanism("gw", epsilon=eps, delta=delta, max_items_per_user=d0)
        b, rho = mp.mpf(m.noise_scale), mp.mpf(m.threshold)
        exact = [(mp.exp(-(rho - 1) / b) / 2, 1), (mp.exp(-rho / b) / 2, d0 - 1)]
        code = m.release_probability(np.array([1.0 * (1 + 2.0 ** -50), 0.0]))
        for probs in (exact, [(float(code[0]), 1), (float(code[1]), d0 - 1)]):
            assert any_released(probs) <= mp.mpf(delta), (eps, delta, d0)
        assert b * mp.mpf(eps) >= 1


def test_partition_selection_keeps_lone_items_within_delta():
    for eps, delta, d0 in GRID:
        m = make_mechanism("partition_optimal", epsilon=eps, delta=delta, max_items_per_user=d0)
        p1 = float(m.release_probability(np.array([1.0]))[0])
        assert any_released([(p1, d0)]) <= mp.mpf(delta), (eps, delta, d0)
        assert any_released([(m.delta_per_item, d0)]) <= mp.mpf(delta)
        assert mp.mpf(m.epsilon_per_item) * d0 <= mp.mpf(eps)


def test_dp_sips_rounds_compose_within_the_budget():
    for eps, delta, d0 in GRID:
        m = make_mechanism("dp_sips", epsilon=eps, delta=delta, max_items_per_user=d0)
        check_gaussian_sigma(m.sigma, eps, delta / 2)
        assert mp.fsum(mp.mpf(s) ** -2 for s in m.round_sigmas) <= mp.mpf(m.sigma) ** -2
        assert mp.fsum(mp.mpf(d) for d in m.round_deltas) <= mp.mpf(delta) / 2
        for s, d, tau in zip(m.round_sigmas, m.round_deltas, m.round_thresholds):
            check_threshold("gaussian", s, tau, d, 0.5, d0,
                            lambda w, s=s, tau=tau: gaussian_release_probability(w, tau, s))


@pytest.mark.parametrize("split", ["uniform", 2.0, 0.5, "shares"])
def test_dpne_levels_compose_within_the_budget(split):
    for eps, delta, d0 in GRID[::3]:
        budget = [1.0, 3.0, 0.5] if split == "shares" else split
        for name, extra in (("dpne", {}), ("dpne_public", {"public_items": ["a"],
                                                           "max_outside_items": 3})):
            m = make_mechanism(name, epsilon=eps, delta=delta, max_items_per_user=d0, max_n=3,
                               budget_split=budget, **extra)
            check_gaussian_sigma(m.sigma_star, eps, delta / 2)
            assert mp.fsum(mp.mpf(s) ** -2 for s in m.level_sigmas) <= \
                mp.mpf(m.sigma_star) ** -2
            check_threshold("gaussian", m.noise_scale, m.threshold, delta / 2, 0.5,
                            m.max_lone_items, m.release_probability)


def test_top_k_candidate_stage_and_gumbel_scale():
    for eps, delta, d0 in GRID[::3]:
        if delta < 2e-100:   # refused: the candidate stage gets δ/2 (test_parameters.py)
            continue
        m = make_mechanism("top_k", epsilon=eps, delta=delta, max_items_per_user=d0, k=10)
        a = m.stage_a
        check_threshold("gaussian", a.noise_scale, a.threshold, delta / 4, 0.5, d0,
                        a.release_probability)
        check_gaussian_sigma(a.noise_scale, a.epsilon, delta / 4)
        assert mp.mpf(m.gumbel_scale) * mp.mpf(m.pick_epsilon) >= 1


def test_the_margin_is_what_the_code_states():
    """Scales and thresholds sit at most a few MARGINs above their unrounded values: the
    rounding protects, it does not cost utility (release outputs move by ulps only)."""
    from dp_vocab.privacy import calibrate as c
    for x in (1e-300, 0.3, 1.0, 7.35, 1e12):
        assert x * (1 + c.MARGIN) <= c.round_up(x) <= x * (1 + 2 * c.MARGIN)
        assert x * (1 - 2 * c.MARGIN) <= c.round_down(x) <= x * (1 - c.MARGIN)
    s = c.agm_sigma(3.0, 5e-6)
    assert c.agm_delta(s, 3.0) <= 5e-6 and s == pytest.approx(1.43806929, abs=5e-8)
    assert math.isclose(c.agm_sigma(3.0, 5e-6), s, rel_tol=1e-12)


def test_count_release_scales_never_spend_more_rho_than_recorded():
    """The count stages' σ is rounded up: the ρ their noise gives, S²/(2σ²) in 80 digits with
    the double σ the release draws from, is at most the ρ the ledger records."""
    from dp_vocab.mechanisms.count_release import DiscreteGaussianCounts, NormalisedGaussianCounts
    for eps, delta, k in GRID[::2]:
        for scale in (1, 7, 100, 2 ** 20):
            n = NormalisedGaussianCounts(eps, delta, max_items_per_user=k, max_count=1,
                                         scale=scale)
            assert mp.mpf(scale) ** 2 / (2 * mp.mpf(n.noise_scale) ** 2) <= mp.mpf(n.rho)
        for clip in (1, 3):
            g = DiscreteGaussianCounts(eps, delta, max_items_per_user=k, max_count=clip)
            l2 = mp.sqrt(k) * clip
            assert l2 ** 2 / (2 * mp.mpf(g.noise_scale) ** 2) <= mp.mpf(g.rho)
