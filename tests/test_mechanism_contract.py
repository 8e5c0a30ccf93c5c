"""The shared suite every mechanism passes (mechanisms/README.md §5, §8): sensitivity on random
neighbouring databases with the same order key, caps, order, output contract."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.bounding import Input
from dp_vocab.mechanisms import MECHANISMS
from dp_vocab.mechanisms.claim import Norm, Support
from dp_vocab.bounding import user_order
from dp_vocab.privacy.noise import RandomSource

ALPHABET = [f"w{i}" for i in range(10)]
PUBLIC = {f"w{i}": float(10 - i) for i in range(5)}  # w5..w9 are missing from the public table


# each mechanism's own parameters beyond (ε, δ, Δ0); "tight" cases add those that make users fill
# items so that caps and cascades engage (a tiny cutoff Γ)
# a public candidate list: items some users hold (w0..w2) and items nobody holds (p0, p1)
PUBLIC_LIST = ["w0", "w1", "w2", "p0", "p1"]
EXTRA = {"gw_kt": {"public_frequencies": PUBLIC}, "top_k": {"k": 2},
         "policy_gaussian_public": {"public_items": PUBLIC_LIST},
         "dp_sips_public": {"public_items": PUBLIC_LIST}}
TIGHT_EXTRA = {name: {"alpha": 0.5} for name in ("policy_laplace", "policy_gaussian", "gw", "gw_kt")}
TIGHT_EXTRA["policy_gaussian_public"] = {"alpha": 0.5, "public_cutoff": 0.0, "max_outside_items": 2}


def params(name, tight):
    p = dict(epsilon=8.0, delta=0.4, max_items_per_user=3) if tight else \
        dict(epsilon=3.0, delta=1e-5, max_items_per_user=4)
    return {**p, **EXTRA.get(name, {}), **(TIGHT_EXTRA.get(name, {}) if tight else {})}


ITEMSET_MECHANISMS = [n for n, cls in MECHANISMS.items()
                      if cls.input is Input.ITEM_SETS]
CASES = [(n, t) for n in ITEMSET_MECHANISMS for t in (True, False)]
IDS = [f"{n}-{'tight' if t else 'default'}" for n, t in CASES]

user_ids = st.one_of(st.text(alphabet="abcxyz", min_size=1, max_size=3), st.integers(0, 30))
databases = st.dictionaries(user_ids, st.lists(st.sampled_from(ALPHABET), max_size=9),
                            min_size=1, max_size=9)
keys = st.binary(min_size=32, max_size=32)


def bounded_sets(mech, itemsets, key):
    b = mech.bounded_sets(itemsets, key)
    v = itemsets.vocab
    return {uid: [v[int(i)] for i in b.items[b.indptr[r]:b.indptr[r + 1]]]
            for r, uid in enumerate(itemsets.user_ids)}


def vec(hist, keys_):
    return np.array([hist.get(k, 0.0) for k in keys_])


@pytest.mark.parametrize("name,tight", CASES, ids=IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(db=databases, key=keys, data=st.data())
def test_sensitivity_and_caps_on_neighbours(name, tight, db, key, data):
    mech = make_mechanism(name, **params(name, tight))
    d0 = mech.max_items_per_user
    D = ItemSets.from_user_items(db.items())
    x = data.draw(st.sampled_from(sorted(db, key=repr)))
    Dp = D.without_users([x])

    # bounding: |S_i| = min(Δ0, |W_i|) (with ≤ K of W_i's items outside a public list first,
    # for mechanisms that cap those apart), S_i ⊆ W_i, identical in D and D' for common users
    S, Sp = bounded_sets(mech, D, key), bounded_sets(mech, Dp, key)
    listed = getattr(mech, "public_item_set", frozenset())
    k_out = getattr(mech, "max_outside_items", None)

    def kept(w: set) -> int:
        return len(w) if k_out is None else len(w & listed) + min(k_out, len(w - listed))
    for uid, s in S.items():
        assert len(s) == len(set(s)) == min(d0, kept(set(db[uid])))
        assert set(s) <= set(db[uid])
        if uid != x:
            assert s == Sp[uid]

    h, hp = mech.histogram(D, key), mech.histogram(Dp, key)
    assert h == mech.histogram(D, key)  # deterministic given the key
    allk = sorted(set(h) | set(hp))
    diff = vec(h, allk) - vec(hp, allk)
    sx = set(S[x])
    others = set().union(*(set(s) for u, s in S.items() if u != x)) if len(S) > 1 else set()
    unique_x = sx - others
    newly = set(h) - set(hp)
    assert set(hp) <= set(h)
    assert newly <= unique_x  # only X's capped items held by nobody else become candidates
    if mech.support is Support.POSITIVE:
        assert newly == unique_x

    # the oracle is the mechanism's own claim (proof: the .md file beside its module)
    claim = mech.claim.sensitivity
    norm = np.abs(diff).sum() if claim.norm is Norm.L1 else math.sqrt((diff ** 2).sum())
    assert norm <= claim.bound + 1e-9
    if claim.monotone:
        assert np.all(diff >= -1e-12)
    if claim.exact:  # X's own weights, as they are: |S_X|^-p on each of X's items, 0 elsewhere
        moved = {k: d for k, d in zip(allk, diff) if d != 0}
        assert moved.keys() == sx
        assert all(d == pytest.approx(len(sx) ** -claim.lone_item_power, abs=1e-12)
                   for d in moved.values())
    if claim.lone_item_power is not None:  # what the threshold is derived from
        # items of a public list are noised whatever their weight: only the others need it
        lone = unique_x - listed
        assert len(lone) <= mech.max_lone_items   # the t the threshold covers
        assert all(h[k] <= len(lone) ** -claim.lone_item_power + 1e-12 for k in lone)
    if claim.lone_items_positive is not None:
        positive = [k for k in unique_x if h[k] > 0]
        assert len(positive) <= claim.lone_items_positive
        assert all(h[k] <= 1 + 1e-12 for k in positive)
    if claim.cap is not None:
        assert all(0 <= w <= claim.cap + 1e-12 for w in h.values())


@given(db=databases, key=keys, other=keys, data=st.data())
@settings(max_examples=100, deadline=None)
def test_user_order_depends_only_on_key_and_ids(db, key, other, data):
    ids = list(db)
    x = data.draw(st.sampled_from(ids))
    order, seeds = user_order(ids, key)
    rest = [u for u in ids if u != x]
    order_p, seeds_p = user_order(rest, key)
    assert [ids[i] for i in order if ids[i] != x] == [rest[i] for i in order_p]
    assert dict(zip(rest, seeds_p.tolist())) == {u: s for u, s in zip(ids, seeds.tolist()) if u != x}


def test_different_keys_permute_users():
    ids = [f"user{i}" for i in range(50)]
    a, _ = user_order(ids, b"a" * 32)
    b, _ = user_order(ids, b"b" * 32)
    assert sorted(a.tolist()) == sorted(b.tolist()) == list(range(50)) and a.tolist() != b.tolist()
    # not the input order, not sorted ids
    assert a.tolist() != list(range(50))


@pytest.mark.parametrize("name,tight", CASES, ids=IDS)
def test_release_contract(name, tight):
    mech = make_mechanism(name, **params(name, tight))
    db = {f"u{i}": ["w0", "w1", "w2"] + [f"w{3 + i % 7}"] for i in range(40)}
    D = ItemSets.from_user_items(db.items())
    rel = mech.release(D, random=RandomSource(seed=1))
    assert rel.items == sorted(rel.items) and len(set(rel.items)) == len(rel.items)
    assert set(rel.items) <= set(ALPHABET) | getattr(mech, "public_item_set", frozenset())
    assert rel.counts is None
    assert rel.epsilon == mech.epsilon and rel.delta == mech.stage().delta
    assert rel.mechanism == f"dp_vocab.{name}.v1"
    assert rel.randomness["mode"].startswith("seeded")
    rec = rel.to_privacy_record()
    assert rec["released_items"] == len(rel.items)
    # the same seed gives the same key and decisions: the same release
    again = mech.release(D, random=RandomSource(seed=1))
    assert again.items == rel.items


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_parameters_are_validated(name):
    from dp_vocab.errors import ParameterError
    base = params(name, False)
    for field, bad in (("epsilon", 0), ("epsilon", -1.0), ("epsilon", float("inf")),
                       ("delta", 0.0), ("delta", 0.7), ("max_items_per_user", 0),
                       ("max_items_per_user", 2.5)):
        with pytest.raises(ParameterError, match=field):
            make_mechanism(name, **{**base, field: bad})
    with pytest.raises(ParameterError, match="not_a_param"):
        make_mechanism(name, **base, not_a_param=1)


def test_mechanisms_are_immutable():
    m = make_mechanism("count_laplace", epsilon=1, delta=1e-5, max_items_per_user=1)
    with pytest.raises(AttributeError):
        m.epsilon = 100


def test_every_mechanism_releases_through_the_one_template():
    """Each mechanism supplies its histogram and decisions; ``Mechanism.release`` builds every
    Release (randomness, key and record in one place)."""
    from dp_vocab.mechanisms import Mechanism
    assert all(cls.release is Mechanism.release for cls in MECHANISMS.values())


@pytest.mark.parametrize("name", [n for n in MECHANISMS if n.endswith("_public")])
def test_a_public_list_for_an_extractor_is_a_new_mechanism(name):
    """``for_extractor`` leaves the mechanism it is called on as it was."""
    from dp_vocab.registry import item_extractor, regex_tokenizer
    m = make_mechanism(name, epsilon=3.0, delta=1e-5, public_items=["The", "cat", "a b"])
    before = m.domain
    norm = m.for_extractor(item_extractor(regex_tokenizer()))
    assert norm is not m and m.domain is before and not before.normalised
    assert norm.domain.normalised and norm.domain.items == ("cat",)
    assert norm.params() == {**m.params(), "public_items": "list of 3 public items"}


# where a public-domain variant departs from its base mechanism's defaults on purpose
OWN_DEFAULTS = {"policy_gaussian_public": {"alpha"}}   # α = 2 with the outside cap (public.md §10)


@pytest.mark.parametrize("name", [n for n in MECHANISMS if n.endswith("_public")])
def test_public_variants_keep_their_base_mechanisms_defaults(name):
    """A public variant declares its list's parameters beside its base mechanism's; the base
    mechanism's defaults must stay (dpne_public once had Δ0 = 100 and uniform sampling, from
    a parameter class that was a Mechanism itself, instead of DPNE's 10 and own-frequency)."""
    import dataclasses
    base = {f.name: f.default for f in dataclasses.fields(MECHANISMS[name[:-len("_public")]])}
    own = {f.name: f.default for f in dataclasses.fields(MECHANISMS[name])}
    changed = {k for k in base if k in own and own[k] != base[k]}
    assert changed == OWN_DEFAULTS.get(name, set()), changed


def test_unknown_mechanism_lists_the_known_ones():
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="policy_gaussian"):
        make_mechanism("greedy_by_gap", epsilon=1, delta=1e-5)


# sequence mechanisms and their options, beside the item-set ones
SEQUENCE_CASES = [("dpne", t, o) for o in ({}, {"policy": "l2_descent"}) for t in (True, False)]
SEQUENCE_CASES += [("dpne_public", t, {"policy": "l2_descent", "public_items": PUBLIC_LIST, **o})
                   for o in ({}, {"max_outside_items": 2}) for t in (True, False)]


@pytest.mark.parametrize("name,tight,options",
                         [(n, t, {}) for n, t in CASES] + SEQUENCE_CASES,
                         ids=IDS + [f"{n}{'-' + o['policy'] if o else ''}"
                                    f"{'-K' if 'max_outside_items' in o else ''}-"
                                    f"{'tight' if t else 'default'}" for n, t, o in SEQUENCE_CASES])
def test_threshold_covers_the_claimed_lone_user(name, tight, options):
    """The calibration matches the claim: a lone user's t ≤ Δ0 items, weighted as the claim
    says (t^-p each, or at most one of them positive ≤ 1), are released with probability at
    most the δ the threshold is paid for, by the mechanism's own release probability."""
    mech = make_mechanism(name, **params(name, tight), **options)
    claim = mech.claim.sensitivity
    assert claim.lone_item_power is not None or claim.lone_items_positive is not None, (
        f"{name}: the claim must say what a lone user's items weigh")
    assert 1 <= mech.max_lone_items <= mech.max_items_per_user
    for t in range(1, mech.max_lone_items + 1):
        if claim.lone_item_power is not None:
            w = np.full(t, float(t) ** -claim.lone_item_power)
        else:
            w = np.array([1.0] * claim.lone_items_positive + [0.0] * t)[:t]
        p = mech.release_probability(w)
        assert 1 - np.prod(1 - p) <= mech.delta_threshold * (1 + 1e-9), (t, p)


PUBLIC_MECHANISMS = [n for n in ITEMSET_MECHANISMS if hasattr(MECHANISMS[n], "public_item_set")]
public_dbs = st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=2),
                             st.lists(st.sampled_from(ALPHABET), max_size=6), max_size=8)


@pytest.mark.parametrize("name", PUBLIC_MECHANISMS)
@pytest.mark.parametrize("tight", [True, False], ids=["tight", "default"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(others=public_dbs, x_public=st.lists(st.sampled_from(PUBLIC_LIST[:3] + ["p0", "p1"]),
                                           min_size=1, max_size=4),
       x_private=st.lists(st.sampled_from(["w5", "w6", "w7", "w8", "w9"]), min_size=1,
                          max_size=4), key=keys)
def test_public_domain_adversarial_neighbours(name, tight, others, x_public, x_private, key):
    """X holds public items (some held by others, some by nobody else) and non-public ones:
    L2 ≤ 1; new candidates are exactly X's unique capped items; X's unique items outside the
    list weigh ≤ 1/√t whatever X's public items; per-item cutoffs respected."""
    mech = make_mechanism(name, **params(name, tight))
    db = {**others, "X": x_public + x_private}
    D = ItemSets.from_user_items(db.items())
    Dp = D.without_users(["X"])
    h, hp = mech.histogram(D, key), mech.histogram(Dp, key)
    allk = sorted(set(h) | set(hp))
    assert math.sqrt(((vec(h, allk) - vec(hp, allk)) ** 2).sum()) <= 1 + 1e-9
    S = bounded_sets(mech, D, key)
    held_by_others = set().union(*(set(s) for u, s in S.items() if u != "X"))
    unique_x = set(S["X"]) - held_by_others
    assert set(h) - set(hp) == unique_x
    lone = unique_x - mech.public_item_set
    assert len(lone) <= mech.max_lone_items   # what the threshold covers
    assert all(h[k] <= len(lone) ** -0.5 + 1e-12 for k in lone)
    if name == "policy_gaussian_public":
        for k, v in h.items():
            assert 0 < v <= (mech.public_gamma if k in mech.public_item_set else mech.cutoff) + 1e-12
