"""Exact thresholds and calibrations against golden values (computed independently of this code)."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from dp_vocab import make_mechanism
from dp_vocab.privacy import calibrate as c

E10 = math.exp(-10)

# Table A: eps delta D0 | CntLap b rho | CntGau s rho | PolLap rho t* | PolGau s rho t* | GW rho GWfix
TABLE_A = """
1 1e-5 1 | 1.0000 11.8198 | 3.8841 18.1569 | 11.8198 1 | 3.8841 18.1569 1 | 11.8198 11.8198
1 1e-5 10 | 10.0000 132.2236 | 12.2827 61.0827 | 13.2224 10 | 3.8841 19.3160 10 | 11.8198 13.2809
1 1e-5 100 | 100.0000 1543.4944 | 38.8414 207.8974 | 15.4349 100 | 3.8841 20.7897 100 | 11.8198 15.4420
1 e10 1 | 1.0000 10.3069 | 3.5431 15.4494 | 10.3069 1 | 3.5431 15.4494 1 | 10.3069 10.3069
1 e10 10 | 10.0000 117.0942 | 11.2044 52.3720 | 11.7094 10 | 3.5431 16.5615 10 | 10.3069 11.7680
1 e10 100 | 100.0000 1392.2001 | 35.4314 179.7441 | 13.9220 100 | 3.5431 17.9744 100 | 10.3069 13.9290
3 1e-5 1 | 0.3333 4.6066 | 1.4381 7.3522 | 4.6066 1 | 1.4381 7.3522 1 | 4.6066 4.6066
3 1e-5 10 | 3.3333 44.7412 | 4.5476 23.2451 | 4.6066 1 | 1.4381 7.3522 1 | 4.6066 4.7300
3 1e-5 100 | 33.3333 515.1648 | 14.3807 77.6020 | 5.1516 100 | 1.4381 7.7602 100 | 4.6066 5.1999
3 e10 1 | 0.3333 4.1023 | 1.3328 6.4353 | 4.1023 1 | 1.3328 6.4353 1 | 4.1023 4.1023
3 e10 10 | 3.3333 39.6981 | 4.2147 20.3242 | 4.1023 1 | 1.3328 6.4353 1 | 4.1023 4.2257
3 e10 100 | 33.3333 464.7334 | 13.3279 68.2366 | 4.6473 100 | 1.3328 6.8237 100 | 4.1023 4.6956
8 1e-5 1 | 0.1250 2.3525 | 0.6165 3.7232 | 2.3525 1 | 0.6165 3.7232 1 | 2.3525 2.3525
8 1e-5 10 | 1.2500 17.4029 | 1.9496 10.5367 | 2.3525 1 | 0.6165 3.7232 1 | 2.3525 2.3528
8 1e-5 100 | 12.5000 193.8118 | 6.1651 33.8400 | 2.3525 1 | 0.6165 3.7232 1 | 2.3525 2.3566
8 e10 1 | 0.1250 2.1634 | 0.5805 3.3672 | 2.1634 1 | 0.5805 3.3672 1 | 2.1634 2.1634
8 e10 10 | 1.2500 15.5118 | 1.8355 9.4160 | 2.1634 1 | 0.5805 3.3672 1 | 2.1634 2.1637
8 e10 100 | 12.5000 174.9000 | 5.8045 30.2826 | 2.1634 1 | 0.5805 3.3672 1 | 2.1634 2.1674
"""

# Table B: eps delta D0 | GamLap a=2 3 5 | GamGau a=2 3 5
TABLE_B = """
1 1e-5 1 | 13.8198 14.8198 16.8198 | 25.9252 29.8093 37.5776
1 1e-5 100 | 17.4349 18.4349 20.4349 | 28.5580 32.4422 40.2104
3 e10 100 | 5.3140 5.6473 6.3140 | 9.4892 10.8220 13.4876
8 e10 10 | 2.4134 2.5384 2.7884 | 4.5281 5.1085 6.2694
"""

# Table C: eps delta D0 | eps_p delta_p | k n1 n2 n_half pi*(1)
TABLE_C = """
1 1e-5 1 | 1.0000 1.000e-05 | 11 11 22 12 1.000e-05
1 1e-5 10 | 0.1000 1.000e-06 | 109 109 217 109 1.000e-06
1 1e-5 100 | 0.0100 1.000e-07 | 1082 1082 2164 1083 1.000e-07
1 e10 1 | 1.0000 4.540e-05 | 10 10 19 10 4.540e-05
3 1e-5 1 | 3.0000 1.000e-05 | 4 4 8 5 1.000e-05
3 e10 100 | 0.0300 4.540e-07 | 347 347 694 348 4.540e-07
8 1e-5 10 | 0.8000 1.000e-06 | 17 17 33 17 1.000e-06
8 e10 100 | 0.0800 4.540e-07 | 143 143 285 143 4.540e-07
"""

# Table D: eps delta sigma_AGM (its 2.27e-5 and 4.54e-5 rows are e^-10/2 and e^-10)
TABLE_D = [(1, 5e-6, 3.88414080), (1, E10 / 2, 3.54313807), (1, 1e-5, 3.73063163),
           (1, E10, 3.37915745), (3, 5e-6, 1.43806929), (3, E10 / 2, 1.33279133),
           (3, 1e-5, 1.39059346), (3, E10, 1.28240432), (8, 5e-6, 0.61651386),
           (8, E10 / 2, 0.58045094), (8, 1e-5, 0.60022907), (8, E10, 0.56325189)]


def _rows(table):
    for line in table.strip().splitlines():
        head, *groups = [part.split() for part in line.split("|")]
        eps, delta, d0 = float(head[0]), (E10 if head[1] == "e10" else float(head[1])), int(head[2])
        yield eps, delta, d0, [[float(x) for x in g] for g in groups]


A_ROWS = list(_rows(TABLE_A))
TOL = 5e-5  # golden values are printed to 4 decimals


@pytest.mark.parametrize("eps,delta,d0,g", A_ROWS)
def test_table_a_through_the_mechanisms(eps, delta, d0, g):
    (cl_b, cl_rho), (cg_s, cg_rho), (pl_rho, _), (pg_s, pg_rho, _), (_gw, gw_fix) = g
    pairs = {
        "count_laplace": (cl_b, cl_rho), "count_gaussian": (cg_s, cg_rho),
        "weighted_laplace": (1 / eps, pl_rho), "policy_laplace": (1 / eps, pl_rho),
        "weighted_gaussian": (pg_s, pg_rho), "policy_gaussian": (pg_s, pg_rho),
        "gw": (1 / eps, gw_fix),
    }
    for name, (scale, rho) in pairs.items():
        m = make_mechanism(name, epsilon=eps, delta=delta, max_items_per_user=d0)
        assert m.noise_scale == pytest.approx(scale, abs=TOL), name
        assert m.threshold == pytest.approx(rho, abs=TOL), name
    kt = make_mechanism("gw_kt", epsilon=eps, delta=delta, max_items_per_user=d0,
                        public_frequencies={"a": 1.0})
    assert kt.threshold == pytest.approx(gw_fix, abs=TOL)


@pytest.mark.parametrize("eps,delta,d0,g", list(_rows(TABLE_B)))
def test_table_b_cutoffs(eps, delta, d0, g):
    lap, gau = g
    for alpha, want in zip((2, 3, 5), lap):
        m = make_mechanism("policy_laplace", epsilon=eps, delta=delta, max_items_per_user=d0,
                           alpha=alpha)
        assert m.cutoff == pytest.approx(want, abs=TOL)
    for alpha, want in zip((2, 3, 5), gau):
        m = make_mechanism("policy_gaussian", epsilon=eps, delta=delta, max_items_per_user=d0,
                           alpha=alpha)
        assert m.cutoff == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("eps,delta,d0,g", list(_rows(TABLE_C)))
def test_table_c_partition_selection(eps, delta, d0, g):
    (eps_p, delta_p), (k, n1, n2, n_half, pi1) = g
    m = make_mechanism("partition_optimal", epsilon=eps, delta=delta, max_items_per_user=d0)
    assert m.epsilon_per_item == pytest.approx(eps_p, abs=TOL)
    assert m.delta_per_item == pytest.approx(delta_p, rel=1e-3)
    assert m.threshold == k
    _, got_n1, got_n2 = c.pi_star_constants(m.epsilon_per_item, m.delta_per_item)
    assert (got_n1, got_n2) == (n1, n2)
    pis = c.pi_star(np.arange(0, n2 + 2), m.epsilon_per_item, m.delta_per_item)
    assert int(np.argmax(pis >= 0.5)) == n_half
    assert pis[1] == pytest.approx(pi1, rel=1e-3)
    # budget split composes back to δ exactly
    assert -np.expm1(d0 * np.log1p(-m.delta_per_item)) == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize("eps,delta,sigma", TABLE_D)
def test_table_d_agm_sigma_and_tightness(eps, delta, sigma):
    s = c.agm_sigma(eps, delta)
    assert s == pytest.approx(sigma, abs=5e-8)
    assert c.agm_delta(s, eps) <= delta
    assert c.agm_delta(s * (1 - 1e-9), eps) > delta


def test_agm_tiny_delta_uses_relative_tolerance():
    # the reference code's absolute stop gives 62.05 here; the exact value is 61.54 (mechanisms/README.md §4)
    assert c.agm_sigma(0.1, 1e-12) == pytest.approx(61.54, abs=0.01)


def test_delta_k_is_stable():
    assert c.delta_k(1e-12, 100) == pytest.approx(1e-14, rel=1e-9)
    assert -np.expm1(7 * np.log1p(-c.delta_k(0.3, 7))) == pytest.approx(0.3, rel=1e-14)


@pytest.mark.parametrize("eps,delta,d0,g", A_ROWS)
def test_failure_probability_at_t_star_equals_delta(eps, delta, d0, g):
    b, rho = c.count_laplace(eps, delta, d0)
    assert -np.expm1(d0 * np.log1p(-0.5 * np.exp(-(rho - 1) / b))) == pytest.approx(delta, rel=1e-12)
    s, rho = c.count_gaussian(eps, delta, d0)
    assert -np.expm1(d0 * np.log1p(-ndtr(-(rho - 1) / s))) == pytest.approx(delta / 2, rel=1e-9)
    b, rho = c.policy_laplace(eps, delta, d0)
    t = np.arange(1, d0 + 1)
    fail = -np.expm1(t * np.log1p(-0.5 * np.exp(-eps * (rho - 1 / t))))
    assert fail.max() == pytest.approx(delta, rel=1e-12) and np.all(fail <= delta * (1 + 1e-12))
    s, rho = c.policy_gaussian(eps, delta, d0)
    fail = -np.expm1(t * np.log1p(-ndtr(-(rho - 1 / np.sqrt(t)) / s)))
    assert fail.max() == pytest.approx(delta / 2, rel=1e-9) and np.all(fail <= delta / 2 * (1 + 1e-9))
    b, rho = c.gw_repaired(eps, delta, d0)
    fail = 1 - (1 - 0.5 * math.exp(-eps * (rho - 1))) * (1 - 0.5 * math.exp(-eps * rho)) ** (d0 - 1)
    assert fail <= delta * (1 + 1e-9) and fail == pytest.approx(delta, rel=1e-6)


@pytest.mark.parametrize("eps,delta", [(1, 1e-5), (3, E10), (8, 1e-5)])
def test_gw_repaired_equals_published_threshold_for_one_item(eps, delta):
    assert c.gw_repaired(eps, delta, 1)[1] == pytest.approx(1 - math.log(2 * delta) / eps, rel=1e-12)


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 2.5, 5.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-3, 0.05])
def test_pi_star_closed_form_matches_recursion_and_dp_constraints(eps, delta):
    _, _, n2 = c.pi_star_constants(eps, delta)
    n = np.arange(0, n2 + 5)
    closed = c.pi_star(n, eps, delta)
    rec = c.pi_star_recursive(int(n[-1]), eps, delta)
    np.testing.assert_allclose(closed, rec, rtol=1e-9, atol=1e-15)
    assert np.all(np.diff(closed) >= -1e-15) and np.all(closed[n > n2] == 1.0)
    prev, cur = closed[:-1], closed[1:]
    assert np.all(cur <= math.exp(eps) * prev + delta + 1e-12)
    assert np.all(1 - prev <= math.exp(eps) * (1 - cur) + delta + 1e-12)


@pytest.mark.parametrize("eps,delta", [(1, 1e-5), (3, E10), (0.5, 1e-6)])
def test_pi_star_dominates_laplace_and_gaussian_thresholds(eps, delta):
    n = np.arange(1, 200)
    lap = make_mechanism("count_laplace", epsilon=eps, delta=delta, max_items_per_user=1)
    gau = make_mechanism("count_gaussian", epsilon=eps, delta=delta, max_items_per_user=1)
    pi = c.pi_star(n, eps, delta)
    assert np.all(pi >= lap.release_probability(n) - 1e-12)
    assert np.all(pi >= gau.release_probability(n) - 1e-12)


def test_tsgd_integer_l_matches_pi_star():
    eps, k = 0.7, 6
    delta = (math.exp(eps) - 1) / (math.exp(k * eps) * (math.exp(eps) + 1) - 2)
    assert c.tsgd_threshold(eps, delta) == k
    z = np.arange(-k, k + 1)
    pmf = np.exp(-eps * np.abs(z))
    pmf /= pmf.sum()
    for n in range(0, 3 * k):
        assert pmf[n + z > k].sum() == pytest.approx(float(c.pi_star(n, eps, delta)), abs=1e-12)
