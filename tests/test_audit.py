"""The empirical audit flags GW as published and passes the shipped mechanisms (greedy.md §5)."""

import pytest

from dp_vocab import make_mechanism
from dp_vocab.audit import audit, clopper_pearson

from reference_impl import published_gw

pytestmark = pytest.mark.slow


def test_clopper_pearson_covers():
    lo, hi = clopper_pearson(7, 2000, 0.95)
    assert lo < 7 / 2000 < hi and clopper_pearson(0, 100, 0.95)[0] == 0.0


def test_audit_flags_gw_as_published_but_not_the_repaired_gw_kt():
    # ε = 1, δ = 1e-5, a canary with 1000 unique items: the published code leaks it with
    # probability ≈ δ(1 + 999/e) ≈ 3.7e-3 (greedy.md §5); 3000 runs see it ~11 times.
    # The repaired gw_kt leaks with probability ≤ δ: 3000 runs see it 0.03 times on average,
    # so a single sighting is possible (3%) and allowed; three or more has probability < 5e-6.
    # False-failure rate: P(Bin(3000, 3.7e-3) < 2) < 3e-4, plus < 5e-6.
    bad = audit(published_gw(1.0, 1e-5), canary_items=1000, runs=3000)
    assert bad.violation and bad.canary_releases >= 2
    assert bad.canary_rate_interval[0] > 1e-5
    good = audit(make_mechanism("gw_kt", epsilon=1.0, delta=1e-5, max_items_per_user=100,
                                public_frequencies={"w0": 5.0}), canary_items=1000, runs=3000,
                 confidence=1 - 1e-6)
    assert good.canary_releases <= 2 and not good.violation
    assert good.epsilon_lower_bound <= 1.0


def test_audit_on_policy_gaussian_with_large_delta_stays_within_claim():
    m = make_mechanism("policy_gaussian", epsilon=1.0, delta=0.05, max_items_per_user=4)
    # confidence 1 − 1e-6: a correct mechanism fails this with probability ≤ 1e-6
    res = audit(m, canary_items=4, runs=3000, confidence=1 - 1e-6)
    assert not res.violation and res.epsilon_lower_bound <= 1.0
    assert res.canary_releases > 0  # δ/2 = 2.5% of runs: the canary is seen, within δ


@pytest.mark.parametrize("name", ["policy_gaussian_public", "dp_sips_public"])
def test_audit_public_domain_mechanisms_stay_within_claim(name):
    """Public list: five base items and five items nobody holds (released by BH at q = 0.2,
    so they are seen); the canary's unique items are outside the list (δ/2 = 2.5% of runs)."""
    public = [f"w{i}" for i in range(5)] + [f"pub{i}" for i in range(5)]
    m = make_mechanism(name, epsilon=1.0, delta=0.05, max_items_per_user=4,
                       public_items=public, public_fdr=0.2)
    res = audit(m, canary_items=4, runs=3000, confidence=1 - 1e-6)
    assert not res.violation and res.epsilon_lower_bound <= 1.0
    assert res.canary_releases > 0


def test_audit_on_dpne_with_the_policy_stays_within_claim():
    """DPNE with L2-descent levels (ngrams.md): a canary holding 4 tokens nobody else holds, its
    n-grams included, is released in at most δ of the runs, and no base unigram moves by
    more than ε. Confidence 1 − 1e-6, and the canary seen at least once (missed in all 600 runs
    with probability ≤ 0.975⁶⁰⁰ ≈ 2.5e-7): a correct mechanism fails with probability ≤ 1.25e-6."""
    m = make_mechanism("dpne", epsilon=1.0, delta=0.05, max_n=2, max_items_per_user=4,
                       policy="l2_descent", eta=0.2)
    res = audit(m, canary_items=4, runs=600, confidence=1 - 1e-6)
    assert not res.violation and res.epsilon_lower_bound <= 1.0
    assert res.canary_releases > 0  # level 1 spends δ/2 on the canary: it is seen


def test_an_audit_too_short_to_test_delta_says_so():
    m = make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5, max_items_per_user=4)
    text = audit(m, canary_items=2, runs=30, confidence=0.95).summary()
    assert "cannot detect one at δ = 1e-05" in text and "300,000 runs would test δ" in text
    assert "consistent with the claimed guarantee" not in text
