"""The randomness module: exact Bernoulli decisions, modes, and no float noise anywhere."""

import re
from pathlib import Path

import numpy as np
import pytest

from dp_vocab.privacy.noise import (RandomSource, bernoulli, gaussian_release_probability,
                                    laplace_release_probability)

from chi_square import pooled_chi2_pvalue

PACKAGE = Path(__file__).resolve().parents[1] / "dp_vocab"


class ScriptedSource(RandomSource):
    """Returns the scripted words first, then OS randomness."""

    def __init__(self, first):
        super().__init__()
        self.first = list(first)

    def words(self, n):
        head, self.first = self.first[:n], self.first[n:]
        rest = super().words(n - len(head)) if n > len(head) else np.zeros(0, np.uint64)
        return np.concatenate([np.array(head, dtype=np.uint64), rest])


def test_edges():
    r = RandomSource()
    out = bernoulli(np.array([0.0, 1.0, -0.0, 2.0, 5e-324]), r)
    assert out.tolist()[:4] == [False, True, False, True]


def test_tie_goes_to_the_exact_fraction():
    # p = 2^-70: p·2^64 = 0 + 2^-6. Release iff the first word is 0 (tie) and then a
    # Bernoulli(2^-6) succeeds: the scripted tie word forces that exact path.
    p = np.array([2.0 ** -70])
    assert not bernoulli(p, ScriptedSource([1])).any()  # U=1 > T=0: no release, no recursion
    hits = sum(bool(bernoulli(p, ScriptedSource([0]))[0]) for _ in range(4000))
    # P(hit) = 2^-6 = 0.0156 given the tie: 4000 draws give 62.5 expected
    assert 25 < hits < 110


def test_threshold_word_compare_is_exact():
    p = np.array([2.0 ** -60])  # T = 16, no fraction
    assert bernoulli(p, ScriptedSource([15])).all()
    assert not bernoulli(p, ScriptedSource([16])).any()


def test_seeded_runs_agree_and_os_runs_differ():
    p = np.full(256, 0.5)
    assert (bernoulli(p, RandomSource(7)) == bernoulli(p, RandomSource(7))).all()
    assert (bernoulli(p, RandomSource()) != bernoulli(p, RandomSource())).any()
    assert RandomSource(7).key() == RandomSource(7).key() != RandomSource().key()
    assert RandomSource(7).describe() == {"mode": "seeded (not for release)", "seed": 7}


def test_release_probabilities_closed_form():
    w = np.array([0.0, 5.0, 10.0])
    np.testing.assert_allclose(laplace_release_probability(w, 5.0, 2.0),
                               [0.5 * np.exp(-2.5), 0.5, 1 - 0.5 * np.exp(-2.5)])
    np.testing.assert_allclose(gaussian_release_probability(w, 5.0, 2.0),
                               [0.006209665325776132, 0.5, 0.9937903346742238])
    # deep tail stays accurate (relative), no underflow to 0 where p is representable
    assert 4.8e-198 < gaussian_release_probability(np.array([0.0]), 30.0, 1.0)[0] < 5.0e-198


def test_no_float_noise_sampler_in_the_package():
    pattern = re.compile(r"random\.(laplace|normal|gumbel|exponential|binomial)|\.laplace\(|\.normal\("
                         r"|\.binomial\(")
    offenders = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py")
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []


def test_only_the_noise_module_draws_randomness():
    draws = re.compile(r"os\.urandom|secrets\.|np\.random\.|import random\b|random\.random\(|default_rng")
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name != "noise.py" and draws.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


@pytest.mark.slow
def test_binomial_is_exact_at_any_size():
    """Exact geometric skipping against the Binomial law, small and huge n (no float sampler
    above some size). χ² goodness of fit with small cells pooled (``chi_square``); each check
    fails falsely with probability ~1e-6."""
    from scipy import stats

    from dp_vocab.privacy.noise import binomial, geometric_failures
    src = RandomSource(20261123)
    for n, p, runs in [(12, 0.3, 4000), (12, 0.8, 4000), (2 ** 40, 1e-9, 1500)]:
        x = np.array([binomial(n, p, src) for _ in range(runs)])
        lo, hi = stats.binom.ppf([1e-4, 1 - 1e-4], n, p).astype(np.int64)
        edges = np.unique(np.linspace(lo, hi + 1, 25).astype(np.int64))
        cdf = stats.binom.cdf(edges - 1, n, p)
        expected = np.diff(np.concatenate([[0.0], cdf[1:-1], [1.0]])) * runs
        observed = np.diff(np.searchsorted(np.sort(x), np.concatenate(
            [[np.iinfo(np.int64).min], edges[1:-1], [np.iinfo(np.int64).max]])))
        assert observed.sum() == runs
        assert pooled_chi2_pvalue(observed, expected) > 1e-6, (n, p, observed, expected)
    g = geometric_failures(0.25, 50000, 40, src)
    pmf = np.append(0.25 * 0.75 ** np.arange(40), 0.75 ** 40)   # last cell: clipped at 40
    observed = np.bincount(g, minlength=41)
    assert pooled_chi2_pvalue(observed, pmf * 50000) > 1e-6
