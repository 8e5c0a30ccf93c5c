"""The empirical audit flags GW as published and passes the shipped mechanisms (greedy.md §5)."""

import pytest

from dp_vocab import make_mechanism
from dp_vocab.research.audit import audit, clopper_pearson

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


# The public path (placement="public"): the canary holds items of the public list that no base
# user holds. Without it they are noised and can be released by BH too, so the audit tests the
# ratio of the canary's release rates (the Gaussian noise and BH on the list), not δ alone.
# The list: five base words, then 100 items nobody holds; q = 0.02 keeps the release rate of an
# item nobody holds low (≈ 0.4%), so a canary item released far more often shows.
PUBLIC = [f"w{i}" for i in range(5)] + [f"pub{i}" for i in range(100)]
PUBLIC_MECHANISMS = {"policy_gaussian_public": {}, "dp_sips_public": {},
                     "dpne_public": {"max_n": 2}}


def _public_mechanism(name, epsilon):
    return make_mechanism(name, epsilon=epsilon, delta=0.05, max_items_per_user=4,
                          public_items=PUBLIC, public_fdr=0.02, **PUBLIC_MECHANISMS[name])


class _Understated:
    """A mechanism that noises as ``mechanism`` but claims ε = ``claimed``: a negative control."""

    def __init__(self, mechanism, claimed):
        self.mechanism, self.epsilon, self.delta = mechanism, claimed, mechanism.delta

    def __getattr__(self, name):
        return getattr(self.mechanism, name)

    def release(self, data, random=None):
        return self.mechanism.release(data, random=random)


@pytest.mark.parametrize("name", sorted(PUBLIC_MECHANISMS))
def test_audit_with_canaries_on_the_public_list_stays_within_claim(name):
    """Two canary items on the list, 1500 runs a dataset. Confidence 1 − 1e-6: a correct
    mechanism is flagged with probability ≤ 2e-6. The canary is released in some runs, so the
    BH path saw it: measured rates 1.5% (dpne_public) to 3.5% over 4000 runs, lower 95% bound
    ≥ 1.1%, missed in all 1500 runs with probability ≤ 0.989¹⁵⁰⁰ < 1e-7."""
    res = audit(_public_mechanism(name, 1.0), canary_items=2, runs=1500,
                confidence=1 - 1e-6, placement="public")
    assert res.placement == "public" and res.canary_items == 2
    assert not res.violation and res.epsilon_lower_bound <= 1.0
    assert res.canary_releases > 0


def test_only_public_canaries_see_an_understated_epsilon_on_the_public_list():
    """Negative control: policy_gaussian_public noising as ε = 8 and claiming ε = 1. Canaries
    outside the list meet the threshold ρ, which is calibrated to δ at any ε, so the audit of
    today's placement cannot see it; one on the list is released in ≈ 56% of runs with it and
    ≈ 0.5% without, an ε lower bound ≈ 2.5 > 1. Missed with probability < 1e-20: the bound
    stays ≤ 1 only if the rate with the canary falls under 21% (38% if the rate without it
    were 4%, itself a 1e-20 event); the unique-placement half fails only if a correct-at-ε=8
    mechanism is flagged, ≤ 2e-6."""
    m = _Understated(_public_mechanism("policy_gaussian_public", 8.0), claimed=1.0)
    unique = audit(m, canary_items=1, runs=1000, confidence=1 - 1e-6)
    assert not unique.violation
    public = audit(m, canary_items=1, runs=1000, confidence=1 - 1e-6, placement="public")
    assert public.violation and public.epsilon_lower_bound > 1.0
    assert "VIOLATION: the empirical ε lower bound" in public.summary()


# Canaries at DPNE's levels >= 2 (placement="ngrams"): the canary holds the base's most held
# tokens in an order no base user has, so its unigrams are released as anyone's and its
# bigrams, its own, meet level 2 (whose zero-weight candidates can be released without it).

@pytest.mark.parametrize("name", ["dpne", "dpne_public", "dpne_bh", "dpne_wbh"])
def test_audit_with_canary_ngrams_at_level_two_stays_within_claim(name):
    """Four tokens, three unique bigrams, η = 0.2. Confidence 1 − 1e-6 (flagged with
    probability ≤ 2e-6); the canary's bigrams are released in ≈ 6% of runs (dpne, measured;
    ≈ 19% with level 2 by adaptive BH at q = 0.3, "dpne_bh"), missed in all 1000 with
    probability < 1e-20."""
    extra = {"public_items": PUBLIC, "public_fdr": 0.02} if name == "dpne_public" else {}
    if name == "dpne_bh":   # level 2 by BH over C_2 (ngrams.md §3a), the same Gaussian vector
        name, extra = "dpne", {"level_fdr": 0.3, "level_fdr_lambda": 0.5}
    if name == "dpne_wbh":   # level 2 by weighted BH over rank classes (§3d), the same vector
        name, extra = "dpne_public", {"public_items": PUBLIC, "public_fdr": 0.02,
                                      "level_fdr": 0.3, "level_fdr_lambda": 0.5,
                                      "level2_rank_power": 1.0}
    m = make_mechanism(name, epsilon=1.0, delta=0.05, max_n=2, max_items_per_user=4,
                       policy="l2_descent", eta=0.2, **extra)
    res = audit(m, canary_items=4, runs=1000, confidence=1 - 1e-6, placement="ngrams")
    assert not res.violation and res.epsilon_lower_bound <= 1.0
    assert res.canary_releases > 0


def test_canary_ngrams_see_an_understated_epsilon_at_level_two():
    """Negative control: dpne noising as ε = 16, claiming ε = 1; the canary's one bigram
    (w1 w0, reversed from the base's order) is released in ≈ 49% of runs with it and ≈ 0%
    without: an ε lower bound ≈ 2.9 > 1. Missed with probability < 1e-20 (the rate with it
    would have to fall under 16%, or 23% with 10 releases without it, itself a 5e-5 event)."""
    m = _Understated(make_mechanism("dpne", epsilon=16.0, delta=0.05, max_n=2,
                                    max_items_per_user=4, policy="l2_descent", eta=0.05),
                     claimed=1.0)
    res = audit(m, canary_items=2, runs=1000, confidence=1 - 1e-6, placement="ngrams")
    assert res.violation and res.epsilon_lower_bound > 1.0


def test_placements_are_checked_before_any_release():
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="placement: expected 'unique' or 'public' or"):
        audit(make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5), runs=1,
              placement="everywhere")
    with pytest.raises(ParameterError, match="this mechanism has no public list"):
        audit(make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5), runs=1,
              placement="public")
    with pytest.raises(ParameterError, match="needs an n-gram mechanism"):
        audit(make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5), runs=1,
              placement="ngrams")
    with pytest.raises(ParameterError, match="canary_items: expected at most 100"):
        audit(_public_mechanism("policy_gaussian_public", 1.0), canary_items=101, runs=1,
              placement="public")


def test_the_default_canary_fits_its_placement_and_progress_is_reported():
    """--canary-items unset: 1,000 unique items, or for "ngrams" as long a run of the base's
    tokens as it allows (the synthetic base holds 40 words); on_run counts every pair."""
    seen = []
    res = audit(make_mechanism("dpne", epsilon=1.0, delta=1e-5), runs=3, placement="ngrams",
                on_run=seen.append)
    assert 2 <= res.canary_items <= 40 and seen == [1, 2, 3]
    assert audit(make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5),
                 runs=1).canary_items == 1000
