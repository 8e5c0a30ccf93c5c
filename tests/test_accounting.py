"""The ledger: stage records, composition, budget checks (mechanisms/README.md §6)."""

import math

import pytest

from dp_vocab import make_mechanism
from dp_vocab.errors import BudgetExceededError
from dp_vocab.mechanisms import MECHANISMS
from dp_vocab.privacy import calibrate
from dp_vocab.privacy.accounting import Ledger, Stage, zcdp_epsilon, zcdp_rho_for


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_every_mechanism_has_a_ledger_stage(name):
    kw = {"gw_kt": {"public_frequencies": {"a": 1.0}}, "top_k": {"k": 5}}.get(name, {})
    m = make_mechanism(name, epsilon=2.0, delta=1e-6, max_items_per_user=9, **kw)
    st = m.stage()
    if name == "top_k":  # two stages: candidates (ε/2, δ/2) and the picks (ε/2, 0 or δ/2)
        a, b = m.stages()
        assert a.epsilon + b.epsilon == 2.0 and a.delta == 5e-7 and b.delta in (0.0, 5e-7)
        return
    assert (st.epsilon, st.delta) == (2.0, 1e-6)
    if name in ("dpne", "dp_sips"):  # composite Gaussian σ* over levels / rounds
        assert st.noise_multiplier == pytest.approx(calibrate.agm_sigma(2.0, 5e-7), rel=1e-9)
        return
    if m.noise == "laplace":  # the noise part alone is ε-DP: multiplier = b/Δ1 = 1/ε
        assert st.noise_multiplier == pytest.approx(1 / 2.0) and st.delta_threshold == 1e-6
    elif m.noise == "gaussian":  # the noise part is (ε, δ/2)-DP: σ/Δ2 = σ_AGM(ε, δ/2; 1)
        assert st.noise_multiplier == pytest.approx(calibrate.agm_sigma(2.0, 5e-7), rel=1e-9)
        assert st.delta_threshold == 5e-7
    else:
        assert st.noise == "other"


def test_basic_and_tight_composition():
    lap = make_mechanism("policy_laplace", epsilon=1.0, delta=1e-6).stage("a")
    gau = make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-6).stage("b")
    assert Ledger([lap, lap]).total()[:2] == (2.0, 2e-6)
    two_gauss = Ledger([gau, gau])
    eps, delta, how = two_gauss.total()
    assert delta == pytest.approx(2e-6) and "PLD" in how
    # two Gaussians at σ compose to one at σ/√2: exact ε at δ_noise = 1e-6 is known
    sigma = calibrate.agm_sigma(1.0, 5e-7)
    mu = math.sqrt(2) / sigma
    lo, hi = 0.0, 10.0
    for _ in range(100):  # invert the exact GDP curve
        mid = (lo + hi) / 2
        if calibrate.agm_delta(1 / mu, mid) > 1e-6:
            lo = mid
        else:
            hi = mid
    assert eps == pytest.approx(hi, abs=0.01) and eps < 2.0
    mixed = Ledger([gau, Stage("c", "x", 0.5, 1e-7)])
    assert mixed.total()[:2] == (1.5, pytest.approx(1.1e-6))


def test_zcdp_composition_of_a_gaussian_and_zcdp_counts():
    """A Gaussian selection beside zCDP counts: ρ adds (1/(2σ²) + ρ_counts), converted at the
    noise parts' δ, plus the selection's δ_thr; it beats the basic sum, and a pair of Gaussians
    keeps the exact PLD, which is tighter still."""
    from dp_vocab.mechanisms.count_release import NormalisedGaussianCounts
    sel = make_mechanism("policy_gaussian_public", epsilon=2.25, delta=7.5e-6,
                         max_items_per_user=1000).stage()
    counts = NormalisedGaussianCounts(0.75, 2.5e-6).stage()
    assert counts.noise == "zcdp" and sel.zcdp() == pytest.approx(1 / (2 * sel.noise_multiplier ** 2))
    eps, delta, how = Ledger([sel, counts]).total()
    assert how.startswith("zCDP") and delta == pytest.approx(1e-5)
    assert eps == pytest.approx(zcdp_epsilon(sel.zcdp() + counts.rho, 3.75e-6 + 2.5e-6), rel=1e-12)
    assert 2.4 < eps < 2.6   # basic: 3
    gau = make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-6).stage()
    assert "PLD" in Ledger([gau, gau]).total()[2]
    assert Ledger([gau, gau]).zcdp()[0] > Ledger([gau, gau]).total()[0]
    # a stage with no additive noise part leaves only the basic sum
    assert Ledger([sel, Stage("c", "x", 0.5, 1e-7)]).zcdp() is None


def test_budget_check_message():
    st = make_mechanism("count_laplace", epsilon=2.0, delta=1e-5, max_items_per_user=5).stage()
    Ledger([st]).check(2.0, 1e-5)
    with pytest.raises(BudgetExceededError, match=r"selection: \(ε=2, δ=1e-05\)"):
        Ledger([st, st]).check(3.0, 1e-4)


def test_zcdp_conversion_against_table_e():
    # Table E: ρ=0.5, δ=1e-5 → CKS20 4.7284; ρ=4, δ=e^-10 → 15.5449
    assert zcdp_epsilon(0.5, 1e-5) == pytest.approx(4.7284, abs=2e-4)
    assert zcdp_epsilon(4.0, math.exp(-10)) == pytest.approx(15.5449, abs=2e-4)
    assert zcdp_epsilon(zcdp_rho_for(1.3, 1e-6), 1e-6) == pytest.approx(1.3, rel=1e-6)


def test_discrete_laplace_stages_use_the_discrete_event():
    """Weighted Gaussian (1, 1e-5) + DLap counts (ε=1, k=1, C=1): dp-accounting's discrete event
    gives ε ≈ 1.9806; the continuous Laplace event would claim 1.9585 (too little)."""
    from dp_vocab.mechanisms.count_release import DiscreteLaplaceCounts
    gau = make_mechanism("weighted_gaussian", epsilon=1.0, delta=1e-5).stage("selection")
    counts = DiscreteLaplaceCounts(epsilon=1.0, max_items_per_user=1, max_count=1).stage()
    assert counts.noise == "discrete_laplace" and counts.sensitivity == 1
    eps, delta, how = Ledger([gau, counts]).total()
    assert "PLD" in how and eps == pytest.approx(1.9806, abs=2e-3)
    assert delta == pytest.approx(1e-5)
    # a budget of 1.97 (enough for the continuous claim) must now be refused
    with pytest.raises(BudgetExceededError):
        Ledger([gau, counts]).check(1.97, 1e-5)
    # the free noisy counts of count_laplace are discrete Laplace too, sensitivity Δ0
    st = make_mechanism("count_laplace", epsilon=1.0, delta=1e-6, max_items_per_user=4,
                        noisy_counts=True).stage()
    assert (st.noise, st.sensitivity) == ("discrete_laplace", 4)
    # scale Δ0/ε rounded up by calibrate.MARGIN (never down): multiplier 1 + 2^-45 or so
    assert 1.0 < st.noise_multiplier <= 1.0 + 4 * calibrate.MARGIN
    assert Ledger([st, st]).total()[:2] == (2.0, 2e-6)  # pure parts: the basic sum is exact
