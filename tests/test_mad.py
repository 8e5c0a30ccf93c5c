"""MAD / MAD2R are not implemented (mad.md): a negative control for the obvious reading of the
paper's abstract, and a check that nothing by that name is offered."""

import math
from collections import defaultdict


def _weighted_gaussian(users):
    h = defaultdict(float)
    for items in users:
        for i in items:
            h[i] += 1 / math.sqrt(len(items))
    return h


def _naive_rerouting(users, tau):
    """Reference only, never shipped: scale every item above tau down to tau, and let each user move
    the squared-L2 mass it freed onto its items below tau (its norm stays exactly 1)."""
    h = _weighted_gaussian(users)
    scale = {i: (tau / w if w > tau else 1.0) for i, w in h.items()}
    out = defaultdict(float)
    for items in users:
        w = 1 / math.sqrt(len(items))
        low = [i for i in items if scale[i] == 1.0]
        freed = sum(w * w * (1 - scale[i] ** 2) for i in items if scale[i] < 1.0)
        for i in items:
            if scale[i] < 1.0:
                out[i] += scale[i] * w
        for i in low:
            out[i] += math.sqrt((len(low) * w * w + freed) / len(low))
    return out


def _l2(a, b):
    return math.sqrt(sum((a.get(k, 0.0) - b.get(k, 0.0)) ** 2 for k in set(a) | set(b)))


def test_negative_control_naive_rerouting_is_not_contractive():
    """mad.md: 20 users hold the same 50 items and one more item j; X holds the 50 items. With the
    cap between the items' weight without X and with X, X's arrival makes every holder reroute
    onto j, which moves by about 3. The Weighted Gaussian distance on the same pair is exactly 1,
    so the harness itself measures X's own vector correctly."""
    m, k = 20, 50
    shared = [f"a{t}" for t in range(k)]
    without_x = [shared + ["j"] for _ in range(m)]
    with_x = without_x + [list(shared)]
    h_without = m / math.sqrt(k + 1)
    tau = h_without + 0.3 / math.sqrt(k)  # between H_a(D') and H_a(D) = H_a(D') + 1/sqrt(k)
    assert abs(_l2(_weighted_gaussian(with_x), _weighted_gaussian(without_x)) - 1) < 1e-12
    assert _l2(_naive_rerouting(with_x, tau), _naive_rerouting(without_x, tau)) > 3
    # every user's own vector still has norm <= 1: the per-user bound alone is not the lemma
    for users in (with_x, without_x):
        h = _weighted_gaussian(users)
        scale = {i: (tau / w if w > tau else 1.0) for i, w in h.items()}
        for items in users:
            w = 1 / math.sqrt(len(items))
            low = [i for i in items if scale[i] == 1.0]
            freed = sum(w * w * (1 - scale[i] ** 2) for i in items if scale[i] < 1.0)
            norm2 = sum((scale[i] * w) ** 2 for i in items if scale[i] < 1.0)
            if low:
                norm2 += len(low) * w * w + freed
            assert norm2 <= 1 + 1e-12


def test_mad_is_not_offered():
    from dp_vocab.registry import mechanism_names
    assert not any("mad" in name.lower() for name in mechanism_names())
