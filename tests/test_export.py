"""Exporters: round trips through the real libraries (tokenizers, spaCy) and count releases."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from dp_vocab import ItemSets, make_mechanism
from dp_vocab.counts import DiscreteGaussianCounts, DiscreteLaplaceCounts
from dp_vocab.export.hf import HFTokenizerExporter
from dp_vocab.export.spacy import SpacyExporter
from dp_vocab.privacy.noise import RandomSource
from dp_vocab.release import Release
from dp_vocab.text.tokenizers import DEFAULT_PATTERN

ITEMS = {"tokenizer": "regex", "pattern": DEFAULT_PATTERN, "nfkc": True, "lowercase": True}
WORDS = ["the", "college", "students", "apply", "stanford", "doesn't", ",", ".", "!", "real"]
HELD_OUT = "Stanford doesn't exist, COLLEGE students! Ｆｕｌｌ-width çà"


def release(with_counts=True):
    counts = {w: 1000 // (i + 1) for i, w in enumerate(WORDS)} if with_counts else None
    return Release(items=sorted(WORDS), mechanism="test", params={}, epsilon=1.0, delta=1e-5,
                   randomness={"mode": "os"}, privacy={}, counts=counts)


def derived_ok(piece: str, special) -> bool:
    core = piece[2:] if piece.startswith("##") else piece
    return piece in special or any(core in w for w in WORDS)


@pytest.mark.parametrize("model", ["wordlevel", "wordpiece", "bpe", "unigram"])
def test_hf_round_trip(tmp_path, model):
    exp = HFTokenizerExporter(model=model, vocab_size=200, classic_files=True)
    files = exp.export(release(), tmp_path, {"items": ITEMS})
    tok = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    vocab = tok.get_vocab()
    assert set(exp.special_tokens) <= set(vocab)
    assert all(derived_ok(p, exp.special_tokens) for p in vocab), sorted(vocab)
    enc = tok.encode(HELD_OUT)
    assert "stanford" in enc.tokens and "college" in enc.tokens  # normaliser: lower-casing
    if model in ("wordlevel", "wordpiece"):
        assert all(w in vocab for w in WORDS)  # the released items themselves
    if model == "wordpiece":
        assert (tmp_path / "hf" / "vocab.txt").exists() and "hf/vocab.txt" in files
    if model == "bpe":
        assert (tmp_path / "hf" / "merges.txt").exists()


def test_bpe_and_unigram_need_counts(tmp_path):
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="counts"):
        HFTokenizerExporter(model="bpe").export(release(False), tmp_path, {"items": ITEMS})


def test_unigram_scores_follow_dp_counts(tmp_path):
    HFTokenizerExporter(model="unigram").export(release(), tmp_path, {"items": ITEMS})
    data = json.loads((tmp_path / "hf" / "tokenizer.json").read_text())
    scores = dict(tuple(x) for x in data["model"]["vocab"])
    assert scores["the"] > scores["college"] > scores["real"]


def test_spacy_round_trip_through_initialize(tmp_path):
    import spacy
    from spacy.util import load_config, load_model_from_config
    out = tmp_path / "run"
    out.mkdir()
    SpacyExporter().export(release(), out, {"output": str(out)})
    vocab = spacy.vocab.Vocab().from_disk(out / "spacy" / "vocab")
    assert "college" in vocab.strings
    nlp = load_model_from_config(load_config(out / "spacy" / "config.cfg"), auto_fill=True)
    nlp.initialize()
    table = nlp.vocab.lookups.get_table("lexeme_prob")
    assert set(table.keys()) == {nlp.vocab.strings[w] for w in WORDS}
    total = sum(c + 1 for c in release().counts.values())
    assert nlp.vocab["the"].prob == pytest.approx(math.log(1001 / total))
    assert nlp.vocab["college"].prob > nlp.vocab["real"].prob
    assert nlp.vocab["not-released"].prob == -20.0  # spaCy's default for unknown lexemes


users = st.dictionaries(st.integers(0, 20), st.lists(st.sampled_from("abcdefg"), max_size=15),
                        min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(db=users, key=st.binary(min_size=32, max_size=32), data=st.data())
def test_count_release_sensitivity(db, key, data):
    d = ItemSets.from_user_items(db.items())
    vocab = sorted({w for ws in db.values() for w in ws})
    if not vocab:
        return
    c = DiscreteLaplaceCounts(1.0, max_items_per_user=2, max_count=3)
    x = data.draw(st.sampled_from(sorted(db)))
    diff = c.true_sums(d, vocab, key) - c.true_sums(d.without_users([x]), vocab, key)
    assert np.all(diff >= 0)
    assert diff.sum() <= 2 * 3 and np.count_nonzero(diff) <= 2


def test_count_release_calibration():
    lap = DiscreteLaplaceCounts(2.0, max_items_per_user=10, max_count=4)
    assert lap.noise_scale == pytest.approx(20.0) and lap.stage().delta == 0
    g = DiscreteGaussianCounts(1.0, 1e-6, max_items_per_user=16, max_count=2)
    assert g.rho == pytest.approx((16 ** 0.5 * 2) ** 2 / (2 * g.noise_scale ** 2))
    d = ItemSets.from_user_items([(i, ["a", "b"]) for i in range(50)])
    got = lap.release_counts(d, ["a", "b"], RandomSource(1))
    assert set(got) == {"a", "b"} and all(v >= 0 for v in got.values())


def test_noisy_counts_threshold_is_exact():
    m = make_mechanism("count_laplace", epsilon=1.0, delta=1e-5, max_items_per_user=10,
                       noisy_counts=True)
    q = math.exp(-1 / m.noise_scale)
    fail = 1 - (1 - q ** m.threshold / (1 + q)) ** 10
    assert fail <= 1e-5 and 1 - (1 - q ** (m.threshold - 1) / (1 + q)) ** 10 > 1e-5
    d = ItemSets.from_user_items([(i, ["a"]) for i in range(400)])
    r = m.release(d, random=RandomSource(2))
    assert r.items == ["a"] and abs(r.counts["a"] - 400) < 200
    assert r.to_privacy_record()["noisy_counts"]["noise"] == "discrete_laplace"
