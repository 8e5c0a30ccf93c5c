"""The backends' conformance suite: the Dask backend on a LocalCluster (2 worker processes)
answers every question of the user-data protocol (``bounding.ItemSetData``,
``bounding.SequenceData`` and the n-gram levels) as the local backend does, and with the same
seeded randomness gives the same releases, ``[counts]`` included."""

import gzip
import shutil
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from dp_vocab import make_mechanism  # noqa: E402
from dp_vocab.backends import BACKENDS, Backend, LocalBackend, make_backend  # noqa: E402
from dp_vocab.bounding import (MAX_ITEMS_PER_USER, Bounding, ItemSetData, Priority,  # noqa: E402
                               SequenceData, Weighting)
from dp_vocab.errors import ParameterError  # noqa: E402
from dp_vocab.mechanisms.count_release import (DiscreteGaussianCounts, DiscreteLaplaceCounts,  # noqa: E402
                                     NormalisedGaussianCounts)
from dp_vocab.backends.dask import DaskBackend  # noqa: E402
from dp_vocab.ingest.corpora import JsonlReader  # noqa: E402
from dp_vocab.privacy.noise import RandomSource  # noqa: E402
from dp_vocab.recipes import run_recipe  # noqa: E402
from dp_vocab.ingest.text.items import ItemExtractor  # noqa: E402
from dp_vocab.ingest.text.tokenizers import RegexTokenizer  # noqa: E402
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR, SAMPLE
from dpne_levels import level_histogram  # noqa: E402

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("dask_backend")

REPO = Path(__file__).resolve().parents[1]
KEY = b"dask-vs-local-fixed-order-key!!!"
MECHS = [("count_laplace", {}), ("count_gaussian", {}), ("weighted_gaussian", {}),
         ("weighted_laplace", {}), ("policy_laplace", {}), ("policy_gaussian", {}),
         ("gw", {}), ("gw_kt", {"public_frequencies": {"the": 9.0, "college": 5.0, "i": 3.0}}),
         ("partition_optimal", {"max_items_per_user": 3}), ("dp_sips", {}), ("top_k", {"k": 50}),
         ("policy_gaussian_public", {}), ("dp_sips_public", {})]   # wordfreq:en as the list


@pytest.fixture(scope="module")
def part(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("c") / "part.jsonl.gz"
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f, gzip.open(path, "wt") as g:
        g.writelines(islice(f, 6000))
    return path


@pytest.fixture(scope="module")
def cluster():
    backend = DaskBackend(n_workers=2)
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(scope="module")
def both(part, cluster):
    extractor = ItemExtractor(RegexTokenizer())
    return (LocalBackend().load(JsonlReader(part), extractor),
            cluster.load(JsonlReader(part), extractor))


# -- conformance: every question of the protocol, local == Dask ------------------------------
def _same(a, b) -> bool:
    """Equal, floats up to summation order (the partitions' sums are added by identity)."""
    if isinstance(a, float) or isinstance(b, float):
        return b == pytest.approx(a, rel=1e-12, abs=1e-12)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _rows(rows, bounding: Bounding) -> list:
    """(item, own count, item hash) of each user's kept items, users in keyed order; within a
    row in priority order when the bounding keeps it (GW), else by item."""
    b, names = rows.bounded, rows.names_of(np.arange(rows.n_items))
    out = []
    for u in b.order.tolist():
        s, e = int(b.indptr[u]), int(b.indptr[u + 1])
        row = [(names[i], c, int(rows.hashes[i]))
               for i, c in zip(b.items[s:e].tolist(), b.counts[s:e].tolist())]
        out.append(row if bounding.ordered else sorted(row))
    return out


def _weights(w) -> dict:
    return {n: (float(x), int(h)) for n, x, h in sorted(zip(w.names, w.weights.tolist(),
                                                            w.hashes.tolist()))}


def _refusal(ask):
    with pytest.raises(ParameterError) as e:
        ask()
    return str(e.value)


ITEMS = ["the", "college", "i", "class", "zz-held-by-nobody"]
BOUNDINGS = {
    "uniform": Bounding(5),
    "own_count": Bounding(5, Priority.OWN_COUNT),
    "gw_kt": Bounding(5, Priority.PUBLIC_RANK, ordered=True,
                      public_rank={"the": 0, "i": 1, "college": 2}),
    # the public list's cap on items outside it (wordfreq:en)
    "outside_list": make_mechanism("policy_gaussian_public", epsilon=3.0, delta=1e-5,
                                   max_items_per_user=5).bounding,
}
ITEM_SET_QUESTIONS = {
    **{f"bounded_rows:{k}": (lambda d, b=b: _rows(d.bounded_rows(KEY, b), b))
       for k, b in BOUNDINGS.items()},
    **{f"weight_sums:{k}:{w.name}": (lambda d, b=b, w=w: _weights(d.weight_sums(KEY, b, w)))
       for k, b in BOUNDINGS.items() for w in Weighting},
    "weight_sums:exclude": lambda d: _weights(d.weight_sums(
        KEY, BOUNDINGS["uniform"], Weighting.L2, frozenset({"the", "i", "zz-held-by-nobody"}))),
    "holder_counts": lambda d: d.holder_counts(ITEMS).tolist(),
    **{f"clipped_count_sums:{k}:{scale}": (
        lambda d, b=b, scale=scale: d.clipped_count_sums(ITEMS, KEY, b, 2, scale).tolist())
       for k, b in BOUNDINGS.items() for scale in (None, 100)},
    "ngram_levels": lambda d: _refusal(lambda: d.ngram_levels(Bounding(5))),
}

LEVEL_CAP = Bounding(3, Priority.OWN_COUNT)


def _level_rows(levels, n: int, bounding=None) -> list:
    """(n-gram, own count) of each user's kept n-grams, users in the level key's order."""
    grams, b = levels.level_rows(n, KEY, bounding)
    return [sorted((grams[i], c) for i, c in zip(b.items[b.indptr[u]:b.indptr[u + 1]].tolist(),
                                                 b.counts[b.indptr[u]:b.indptr[u + 1]].tolist()))
            for u in b.order.tolist()]


def _level_chunks(levels, n: int, bounding=None) -> list:
    """``_level_rows`` read a chunk at a time (chunks and users in keyed order)."""
    grams, chunks = levels.level_chunks(n, KEY, bounding)
    return [sorted((grams[i], c) for i, c in zip(b.items[b.indptr[u]:b.indptr[u + 1]].tolist(),
                                                 b.counts[b.indptr[u]:b.indptr[u + 1]].tolist()))
            for b in chunks for u in b.order.tolist()]


def _at_level_2(ask):
    """``ask(levels)`` at level 2, the released level 1 set (public: the 150 words of most
    weight locally)."""
    def question(data, local_words):
        levels = data.ngram_levels(Bounding(10))
        levels.level_weights(1, KEY)
        levels.set_released(1, local_words)
        return ask(levels)
    return question


def _level_weights(levels, n: int, bounding=None) -> dict:
    grams, w = levels.level_weights(n, KEY, bounding)
    return dict(sorted(zip(grams, w.tolist())))


SEQUENCE_QUESTIONS = {
    "ngram_levels:level_weights": lambda d, _: _level_weights(d.ngram_levels(Bounding(10)), 1),
    "ngram_levels:level_weights:capped": lambda d, _: _level_weights(
        d.ngram_levels(Bounding(10)), 1, LEVEL_CAP),
    "ngram_levels:level_rows": lambda d, _: _level_rows(d.ngram_levels(Bounding(10)), 1),
    "ngram_levels:set_released:level_weights": _at_level_2(lambda lv: _level_weights(lv, 2)),
    "ngram_levels:set_released:level_rows": _at_level_2(lambda lv: _level_rows(lv, 2, LEVEL_CAP)),
    "ngram_levels:set_released:level_chunks": _at_level_2(
        lambda lv: _level_chunks(lv, 2, LEVEL_CAP)),
    **{name: (lambda d, _, name=name: _refusal(
        lambda: getattr(d, name)(*{"holder_counts": (ITEMS,), "weight_sums": (
            KEY, Bounding(5), Weighting.L2), "clipped_count_sums": (ITEMS, KEY, Bounding(5), 2)
           }.get(name, (KEY, Bounding(5))))))
       for name in sorted(ItemSetData.__abstractmethods__)},
}


def test_the_conformance_questions_cover_the_protocol():
    """Every method of both halves of the protocol, and of the n-gram levels, is asked."""
    asked = {q.split(":")[0] for q in ITEM_SET_QUESTIONS}
    assert asked == set(ItemSetData.__abstractmethods__) | {"ngram_levels"}
    asked = {q.split(":")[0] for q in SEQUENCE_QUESTIONS}
    assert asked == set(ItemSetData.__abstractmethods__) | set(SequenceData.__abstractmethods__)
    level_methods = {p for q in SEQUENCE_QUESTIONS for p in q.split(":")[1:]} - {"capped"}
    assert level_methods == {"level_weights", "level_rows", "level_chunks", "set_released"}


def test_every_backend_is_registered_and_loads_the_protocols_data(both, cluster):
    assert BACKENDS == {"local": LocalBackend, "dask": type(cluster)}
    assert all(issubclass(b, Backend) for b in BACKENDS.values())
    assert isinstance(make_backend({}), LocalBackend)
    with pytest.raises(ParameterError, match="'local', 'dask'"):
        make_backend({"backend": "spark"})
    assert all(isinstance(d, ItemSetData) for d in both)
    assert LocalBackend().describe() == {"backend": "local"}
    assert "private" in repr(both[1]) and "private" in repr(both[0])


@pytest.mark.parametrize("question", list(ITEM_SET_QUESTIONS))
def test_item_sets_answer_as_locally(both, question):
    local, remote = both
    a, b = ITEM_SET_QUESTIONS[question](local), ITEM_SET_QUESTIONS[question](remote)
    assert a, "a question answered by nothing tests nothing"
    assert _same(a, b)
    if question.startswith(("bounded_rows", "holder", "clipped")) or ":COUNT" in question:
        assert a == b   # integers: bit for bit


@pytest.fixture(scope="module")
def both_sequences(part, cluster):
    extractor = ItemExtractor(RegexTokenizer())
    local = LocalBackend().load(JsonlReader(part), extractor, sequences=True)
    remote = cluster.load(JsonlReader(part), extractor, sequences=True)
    grams, w = local.ngram_levels(Bounding(10)).level_weights(1, KEY)
    words = sorted(grams[i] for i in np.argsort(-w, kind="stable")[:150].tolist())
    return local, remote, words


@pytest.mark.parametrize("question", list(SEQUENCE_QUESTIONS))
def test_token_corpora_answer_as_locally(both_sequences, question):
    local, remote, words = both_sequences
    assert all(isinstance(d, SequenceData) for d in (local, remote))
    a, b = SEQUENCE_QUESTIONS[question](local, words), SEQUENCE_QUESTIONS[question](remote, words)
    assert a, "a question answered by nothing tests nothing"
    assert _same(a, b)


@pytest.mark.parametrize("name,extra", MECHS, ids=[m for m, _ in MECHS])
def test_histograms_and_seeded_releases_match(both, name, extra):
    local, remote = both
    kw = {"epsilon": 3.0, "delta": 1e-5, "max_items_per_user": 20, **extra}
    m = make_mechanism(name, **kw)
    h_local, h_dask = m.histogram(local, KEY), m.histogram(remote, KEY)
    assert list(h_local) == list(h_dask)  # same candidates, same canonical order
    for item, w in h_local.items():  # equal up to float summation order
        assert h_dask[item] == pytest.approx(w, rel=1e-12, abs=1e-12)
    if m.weighting is Weighting.COUNT:
        assert h_local == h_dask  # integer sums: bit-identical
    a = m.release(local, key=KEY, random=RandomSource(42))
    b = m.release(remote, key=KEY, random=RandomSource(42))
    assert a.items == b.items


def test_free_noisy_counts_match_local(both):
    local, remote = both
    m = make_mechanism("count_laplace", epsilon=3.0, delta=1e-5, max_items_per_user=20,
                       noisy_counts=True)
    a = m.release(local, key=KEY, random=RandomSource(11))
    b = m.release(remote, key=KEY, random=RandomSource(11))
    assert a.counts is not None and len(a.counts) > 20
    assert a.items == b.items and a.counts == b.counts


@pytest.mark.parametrize("counter", [
    DiscreteLaplaceCounts(2.0, max_items_per_user=20, max_count=3),
    DiscreteGaussianCounts(2.0, 1e-6, max_items_per_user=5, max_count=2),
    NormalisedGaussianCounts(2.0, 1e-6, max_items_per_user=5, max_count=2, scale=1000)],
    ids=["laplace", "gaussian", "normalised"])
def test_count_release_matches_local(both, counter):
    local, remote = both
    vocab = make_mechanism("count_gaussian", epsilon=3.0, delta=1e-5, max_items_per_user=50
                           ).release(local, key=KEY, random=RandomSource(3)).items
    items = vocab + ["zz-held-by-nobody"]
    sums = counter.true_sums(local, items, KEY)
    assert sums.dtype == np.int64 and sums[-1] == 0 and (sums[:-1] > 0).all()
    assert np.array_equal(sums, counter.true_sums(remote, items, KEY))
    # the cap and the clip bind on this corpus (else the test would not see them differ)
    unbounded = DiscreteLaplaceCounts(1.0, max_items_per_user=MAX_ITEMS_PER_USER,
                                      max_count=2 ** 31 - 1)
    totals = unbounded.true_sums(local, items, KEY)
    if not isinstance(counter, NormalisedGaussianCounts):   # those are not in occurrences
        assert (sums <= totals).all() and (sums < totals).any()
    assert np.array_equal(totals, unbounded.true_sums(remote, items, KEY))
    held = local.to_dict()   # the unbounded sums are the plain occurrence totals
    assert totals.tolist() == [sum(u.get(w, 0) for u in held.values()) for w in items]
    # same key from the same seed, same sums, same noise draws
    assert counter.release_counts(local, items, RandomSource(8)) == \
        counter.release_counts(remote, items, RandomSource(8))


def test_counts_recipe_on_dask_writes_the_local_files(tmp_path, part, cluster):
    recipe = {"run": {"seed": 21, "key": KEY.hex()},
              "corpus": {"@readers": "dp_vocab.jsonl.v1", "path": str(part)},
              "items": {"@extractors": "dp_vocab.items.v1",
                        "tokenizer": {"@tokenizers": "dp_vocab.regex.v1"}},
              "mechanism": {"@mechanisms": "dp_vocab.policy_gaussian.v1", "epsilon": 2.0,
                            "delta": 1e-5, "max_items_per_user": 50},
              "counts": {"@counts": "dp_vocab.discrete_laplace_counts.v1", "epsilon": 2.0,
                         "max_items_per_user": 20, "max_count": 3},
              "export": {"@exporters": "dp_vocab.plain.v1", "jsonl": True}}
    local = run_recipe(recipe, tmp_path / "local")
    # the module's cluster, through its scheduler address (a remote cluster's route)
    dask = run_recipe(recipe, tmp_path / "dask", overrides={
        "run.backend": "dask", "run.scheduler_address": cluster.client.scheduler.address,
        "run.send_private_data_unencrypted": True})   # tcp:// on this machine: opted in
    assert dask.record["backend"]["backend"] == "dask"
    assert local.release.counts is not None and len(local.release.counts) > 100
    assert dask.release.counts == local.release.counts
    for name in ("vocab.txt", "vocab.jsonl"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert dask.record["composition"] == local.record["composition"]


def test_private_bpe_on_dask_writes_the_local_files(tmp_path, part, cluster):
    """A Hugging Face pre-tokenizer extracts inside the Dask workers (daemonic processes: no
    pool of their own) and the [counts] stage's normalised sums are computed there: every file
    is the local one, byte for byte."""
    import json
    overrides = {"run.seed": 5, "run.key": KEY.hex(), "paths.corpus": str(part),
                 "export.vocab_size": 1000, "export.public_prior": None}   # a quicker export
    run_recipe("private-bpe", tmp_path / "local", overrides=overrides)
    run_recipe("private-bpe", tmp_path / "dask", overrides={
        **overrides, "run.backend": "dask",
        "run.scheduler_address": cluster.client.scheduler.address,
        "run.send_private_data_unencrypted": True})

    def files(root: Path) -> dict:   # recipe.cfg holds the [run] settings, which differ
        out = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
               if p.is_file() and p.name != "recipe.cfg"}
        record = json.loads(out.pop("privacy.json"))
        return {**out, "privacy.json": {k: v for k, v in record.items() if k != "backend"}}
    local, dask = files(tmp_path / "local"), files(tmp_path / "dask")
    assert "hf/tokenizer.json" in local and local["privacy.json"]["noisy_counts"]
    assert dask == local


def test_relative_paths_are_read_by_workers_in_another_directory(tmp_path, part, cluster,
                                                                monkeypatch):
    """The module's workers started in the tests' directory; the client now runs in another,
    and gives the corpus, a text folder and a tokenizer's pipeline relative to it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    shutil.copy(part, tmp_path / "part.jsonl.gz")
    (tmp_path / "docs").mkdir()
    for i in range(30):
        (tmp_path / "docs" / f"u{i}.txt").write_text("the college and the class", "utf-8")
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tok.json"))
    monkeypatch.chdir(tmp_path)
    remote = {"run.backend": "dask", "run.scheduler_address": cluster.client.scheduler.address,
              "run.send_private_data_unencrypted": True, "run.seed": 3, "run.key": KEY.hex()}
    for name, over in (
            ("jsonl", {"paths.corpus": "part.jsonl.gz",
                       "items.tokenizer.@tokenizers": "dp_vocab.hf_tokenizer_pipeline.v1",
                       "items.tokenizer.path": "tok.json"}),
            ("folder", {"paths.corpus": "docs",
                        "corpus.@readers": "dp_vocab.text_folder.v1"})):
        local = run_recipe("quickstart", f"{name}-local", overrides={**over, "run.seed": 3,
                                                                     "run.key": KEY.hex()})
        dask = run_recipe("quickstart", f"{name}-dask", overrides={**over, **remote})
        assert dask.release.items == local.release.items and local.release.items, name


def test_quickstart_on_dask_records_the_backend(tmp_path):
    res = run_recipe(RECIPE_DIR / "quickstart.cfg", tmp_path / "o",
                     overrides={"run.backend": "dask", "run.n_workers": 2})
    assert res.record["backend"] == {"backend": "dask", "scheduler": "LocalCluster(2 workers)"}
    assert len(res.release.items) > 200


def test_users_spread_over_several_files_are_grouped(tmp_path):
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        lines = list(islice(f, 3000))
    for i in range(3):  # round-robin: most users' documents land in several files
        with open(tmp_path / f"part{i}.jsonl", "w", encoding="utf-8") as g:
            g.writelines(lines[i::3])
    pattern = tmp_path / "part*.jsonl"
    # a small per-user distinct cap, applied while the users' parts are merged on the cluster
    extractor = ItemExtractor(RegexTokenizer(), max_distinct_per_user=25)
    local = LocalBackend().load(JsonlReader(pattern), extractor)
    assert max(len(local.row(i)[0]) for i in range(local.n_users)) == 25
    backend = DaskBackend(n_workers=2)
    try:
        remote = backend.load(JsonlReader(pattern), extractor)
        m = make_mechanism("count_gaussian", epsilon=2.0, delta=1e-5, max_items_per_user=30)
        assert m.histogram(local, KEY) == m.histogram(remote, KEY)
        assert max(int(np.diff(p.itemsets.indptr).max())
                   for p in backend.client.gather(remote.parts)) == 25
    finally:
        backend.close()


def test_dpne_levels_on_dask_match_local(tmp_path):
    from dp_vocab.ingest.extract import extract_sequences
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f, gzip.open(path, "wt") as g:
        g.writelines(islice(f, 8000))
    extractor = ItemExtractor(RegexTokenizer())
    local = extract_sequences(JsonlReader(path), extractor)
    backend = DaskBackend(n_workers=2)
    try:
        remote = backend.load(JsonlReader(path), extractor, sequences=True)
        m = make_mechanism("dpne", epsilon=4.0, delta=1e-5, max_n=4, max_items_per_user=10,
                           eta=0.2)
        h1, h2 = level_histogram(m, local, 1, [], KEY), level_histogram(m, remote, 1, [], KEY)
        assert h1.keys() == h2.keys()
        assert all(h2[k] == pytest.approx(v, rel=1e-12) for k, v in h1.items())
        a = m.release(local, key=KEY, random=RandomSource(9))
        b = m.release(remote, key=KEY, random=RandomSource(9))
        assert a.items == b.items and a.details == b.details
        assert max(len(g.split(" ")) for g in a.items) >= 3
        # the recipe's levers: Policy Gaussian levels, a level cap, the public word list at level 1
        for name, extra in (("dpne", {}), ("dpne_public", {"public_items": sorted(
                {w for g in a.items for w in g.split(" ")})[:200] + ["zzpublicnobody"]})):
            m = make_mechanism(name, epsilon=4.0, delta=1e-5, max_n=3, max_items_per_user=50,
                               max_ngrams_per_user=100, policy="l2_descent", alpha=8.0, eta=0.2,
                               **extra)
            for n, prev in ((1, []), (2, sorted(w for w in a.items if " " not in w))):
                h1, h2 = level_histogram(m, local, n, prev, KEY), \
                    level_histogram(m, remote, n, prev, KEY)
                assert h1.keys() == h2.keys() and h1
                assert all(h2[k] == pytest.approx(v, rel=1e-12) for k, v in h1.items())
            a2 = m.release(local, key=KEY, random=RandomSource(9))
            b2 = m.release(remote, key=KEY, random=RandomSource(9))
            assert a2.items == b2.items and a2.details == b2.details
    finally:
        backend.close()


def test_fewer_users_than_partitions_and_empty_partitions(tmp_path):
    # one user: the contiguous split of a single file leaves a partition empty
    path = tmp_path / "one.jsonl"
    path.write_text('{"user": "u1", "text": "alpha beta beta gamma"}\n', encoding="utf-8")
    extractor = ItemExtractor(RegexTokenizer())
    local = LocalBackend().load(JsonlReader(path), extractor)
    backend = DaskBackend(n_workers=2)
    try:
        remote = backend.load(JsonlReader(path), extractor)
        assert len(remote.parts) == 2
        assert sorted(p.itemsets.n_users for p in backend.client.gather(remote.parts)) == [0, 1]
        for name in ("count_gaussian", "weighted_gaussian", "policy_gaussian"):
            m = make_mechanism(name, epsilon=3.0, delta=1e-5, max_items_per_user=2)
            assert m.histogram(local, KEY) == pytest.approx(m.histogram(remote, KEY), rel=1e-12)
        assert remote.holder_counts(["beta", "zeta"]).tolist() == [1.0, 0.0]
        counter = DiscreteLaplaceCounts(1.0, max_items_per_user=2, max_count=1)
        for data in (local, remote):   # beta (own count 2) and gamma kept, clipped to 1
            assert counter.true_sums(data, ["beta", "gamma", "zeta"], KEY).tolist() == [1, 1, 0]
    finally:
        backend.close()


def test_a_bad_line_raises_the_readers_error_on_dask(tmp_path):
    from dp_vocab.errors import CorpusError
    path = tmp_path / "bad.jsonl"
    path.write_text('{"user": "u1", "text": "fine"}\n{"user": "u2", "text": \n' +
                    '{"user": "u3", "text": "fine"}\n' * 40 + '{"user": 1.5, "text": "x"}\n',
                    encoding="utf-8")   # bad lines in both shares: the first is raised
    extractor = ItemExtractor(RegexTokenizer())
    with pytest.raises(CorpusError) as local_error:
        LocalBackend().load(JsonlReader(path), extractor)
    backend = DaskBackend(n_workers=2)
    try:
        with pytest.raises(CorpusError) as dask_error:
            backend.load(JsonlReader(path), extractor)
        assert str(dask_error.value) == str(local_error.value)
    finally:
        backend.close()


def test_items_sharing_a_first_hash_stay_apart_when_merged():
    # a 64-bit collision is astronomically rare: forge one in the identities the partitions send
    from dp_vocab.backends.dask import _add_weights, _MergedRows
    ident = np.array([[7, 1], [7, 2], [5, 9]], dtype=np.uint64)   # two items share hash 7
    a = (["x", "y", "z"], ident, np.array([1.0, 2.0, 4.0]))
    b = (["y", "x"], ident[[1, 0]], np.array([8.0, 16.0]))
    w = _add_weights([a, b])
    assert dict(zip(w.names, w.weights.tolist())) == {"x": 17.0, "y": 10.0, "z": 4.0}
    assert sorted(w.hashes.tolist()) == [5, 7, 7]
    # rows: partition a has users with order words 3 and 1, partition b one with word 2
    rows_a = (np.array([[3, 0, 0], [1, 0, 0]], np.uint64), np.array([2, 1]),
              np.array([0, 1, 2], np.int32), np.array([1, 2, 3], np.int32), ident)
    rows_b = (np.array([[2, 0, 0]], np.uint64), np.array([2]), np.array([0, 1], np.int32),
              np.array([4, 5], np.int32), ident[[1, 0]])
    merged = _MergedRows([rows_a, rows_b])
    names = ["x", "y", "z", "y", "x"]   # the strings behind both tables, in table order
    part, pos = merged.source(np.arange(len(merged.idents)))
    by_id = [names[int(merged.offsets[p] + i)] for p, i in zip(part.tolist(), pos.tolist())]
    b_ = merged.bounded
    rows = [[(by_id[i], c) for i, c in zip(b_.items[b_.indptr[r]:b_.indptr[r + 1]],
                                            b_.counts[b_.indptr[r]:b_.indptr[r + 1]].tolist())]
            for r in b_.order.tolist()]
    # keyed order: words 1, 2, 3; each item with its own count
    assert rows == [[("z", 3)], [("y", 4), ("x", 5)], [("x", 1), ("y", 2)]]


def test_rows_tied_on_the_first_order_word_are_ordered_by_all_three():
    # only first words cross by default; a forged tie makes the merge ask for the full words
    from dp_vocab.backends.dask import _MergedRows
    table = np.array([[1, 1], [2, 2]], dtype=np.uint64)
    full = [np.array([[5, 9, 0], [4, 0, 0]], np.uint64), np.array([[5, 3, 0]], np.uint64)]
    ones = np.ones(2, np.int32)
    parts = [(full[0][:, 0].copy(), np.array([1, 1], np.int32), np.array([0, 1], np.int32),
              ones, table),
             (full[1][:, 0].copy(), np.array([1], np.int32), np.array([1], np.int32), ones[:1],
              table)]
    asked = []
    merged = _MergedRows(parts, lambda: asked.append(1) or full)
    assert asked == [1]
    assert merged.bounded.order.tolist() == [1, 2, 0]   # words 4, (5, 3), (5, 9)
    untied = [(np.array([7, 4], np.uint64),) + p[1:] for p in parts[:1]]
    assert _MergedRows(untied, lambda: 1 / 0).bounded.order.tolist() == [1, 0]


@pytest.mark.parametrize("ids", ["integers", "mixed"])
def test_one_file_read_in_shares_keeps_users_of_every_id_kind(tmp_path, cluster, ids):
    """One JSONL file is read in a share per worker; a user in both shares is one user, and
    integer ids (numbered in polars) and mixed ids (as Python objects) give the local data."""
    import json
    import warnings

    from dp_vocab.ingest.corpora.readers import MixedUserIdWarning
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for line in islice(f, 2000)]
    number = {u: k for k, u in enumerate(sorted({d["user"] for d in docs}))}
    path = tmp_path / "one.jsonl"
    with open(path, "w", encoding="utf-8") as g:
        for d in docs[::2] + docs[1::2]:   # most users' documents in both halves
            k = number[d["user"]]
            user = k if ids == "integers" or k % 3 else d["user"]
            g.write(json.dumps({"user": user, "text": d["text"]}) + "\n")
    extractor = ItemExtractor(RegexTokenizer(), max_distinct_per_user=25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MixedUserIdWarning)
        local = LocalBackend().load(JsonlReader(path), extractor)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        remote = cluster.load(JsonlReader(path), extractor)
    # once for the whole load, as locally, not once per share (nor in the workers' logs)
    assert sum(issubclass(w.category, MixedUserIdWarning) for w in seen) == (ids == "mixed")
    parts = [p.itemsets for p in cluster.client.gather(remote.parts)]
    def kinds(user_ids):   # 7 and "7" are two users
        return sorted((type(u).__name__, str(u)) for u in user_ids)
    assert kinds(u for its in parts for u in its.user_ids) == kinds(local.user_ids)
    m = make_mechanism("count_gaussian", epsilon=2.0, delta=1e-5, max_items_per_user=30)
    assert m.histogram(local, KEY) == m.histogram(remote, KEY)


def test_id_kinds_mixed_across_files_warn_once_on_dask(tmp_path, cluster):
    """Each file holds one kind of user id: no worker sees both, the client warns once."""
    import json
    import warnings

    from dp_vocab.ingest.corpora.readers import MixedUserIdWarning
    for name, users in (("a.jsonl", [1, 2, 3]), ("b.jsonl", ["x", "y", "1"])):
        (tmp_path / name).write_text("".join(json.dumps({"user": u, "text": f"word {u}"}) + "\n"
                                             for u in users), encoding="utf-8")
    extractor = ItemExtractor(RegexTokenizer())
    for backend in (LocalBackend(), cluster):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            loaded = backend.load(JsonlReader(str(tmp_path / "*.jsonl")), extractor)
        assert [w.category for w in seen] == [MixedUserIdWarning]
        assert "1" not in str(seen[0].message)   # names no id
    parts = [p.itemsets for p in cluster.client.gather(loaded.parts)]
    assert sorted(map(repr, (u for its in parts for u in its.user_ids))) == \
        sorted(["1", "2", "3", "'x'", "'y'", "'1'"])


def test_dask_says_nothing_of_the_private_data_outside_its_results(cluster, tmp_path, capfd):
    """distributed's warning of a large graph states its size in MiB, a statistic of the
    corpus when the graph carries an in-memory frame or the candidates' positions; a failed
    task is logged by its worker with its exception's text, which may quote the input, on this
    process's stderr; and a dashboard would serve those exceptions to the network. None of
    them may happen: the error reaches the caller, who decides what to show."""
    import warnings

    import polars as pl

    from dp_vocab.ingest.corpora.tables import FrameReader
    import urllib.error
    import urllib.request
    (sock,) = cluster.cluster.scheduler.http_server._sockets.values()
    host, port = sock.getsockname()[:2]
    assert host == "127.0.0.1"
    for page in ("info/main/exceptions.html", "status", "metrics", "json/counts.json"):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/{page}", timeout=10)
    n = 120_000   # an in-memory corpus of ~12 MiB: above distributed's 10 MiB warning
    frame = pl.DataFrame({"user": [f"u{i}" for i in range(n)],
                          "text": [f"x{i}y zz{i % 7} words here and there" for i in range(n)]})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        data = cluster.load(FrameReader(frame), ItemExtractor(RegexTokenizer()))
        make_mechanism("policy_gaussian", epsilon=1.0, delta=1e-5, max_items_per_user=4) \
            .release(data, key=KEY, random=RandomSource(seed=1))
    assert not [w for w in seen if "MiB" in str(w.message)], [str(w.message) for w in seen]

    class Quoting(RegexTokenizer):   # a tokenizer whose error quotes the document
        def __call__(self, text):
            if "secret" in text:
                raise ValueError(f"cannot tokenize {text!r}")
            return super().__call__(text)
    path = tmp_path / "q.jsonl"
    path.write_text('{"user": "a", "text": "plain"}\n{"user": "b", "text": "a secret here"}\n',
                    encoding="utf-8")
    capfd.readouterr()
    with pytest.raises(ValueError):
        cluster.load(JsonlReader(path), ItemExtractor(Quoting()))
    import time
    time.sleep(1)   # the workers' logs, if any, reach stderr
    err = capfd.readouterr().err
    assert "secret" not in err, err


def test_lines_skipped_on_workers_are_counted_as_locally(cluster, tmp_path):
    """on_error = "skip": the workers' readers skip the bad lines; the caller's reader counts
    them, with the first reasons (file, line, field), as a local run does."""
    import json
    for i in range(2):
        lines = [json.dumps({"user": f"u{i}{j}", "text": "plain words"}) for j in range(40)]
        lines[7 + i] = json.dumps({"user": "x", "text": 3})   # not a string
        lines[20] = "{not json"
        (tmp_path / f"s{i}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    extractor = ItemExtractor(RegexTokenizer())
    readers = [JsonlReader(tmp_path / "s*.jsonl", on_error="skip") for _ in range(2)]
    LocalBackend().load(readers[0], extractor)
    cluster.load(readers[1], extractor)
    assert readers[0].skipped == readers[1].skipped == 4
    assert readers[1].skip_reasons == readers[0].skip_reasons
    assert all("s0.jsonl" in r or "s1.jsonl" in r for r in readers[1].skip_reasons)


def _nothing_to_read(tmp_path, kind):
    """A reader of ``kind`` whose every line (row, file) is skipped, or that holds none."""
    import json
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from dp_vocab.ingest.corpora import FrameReader, ParquetReader, TextDirReader
    if kind.startswith("jsonl"):
        for i in range(2):   # a wrong text field, skipped: one file read in shares, or two
            (tmp_path / f"s{i}.jsonl").write_text("".join(
                json.dumps({"user": f"u{i}{j}", "text": "plain words"}) + "\n"
                for j in range(40)), encoding="utf-8")
        path = tmp_path / ("s0.jsonl" if kind == "jsonl" else "s*.jsonl")
        return JsonlReader(path, text_field="body", on_error="skip")
    if kind == "text_folder":
        (tmp_path / "docs").mkdir(exist_ok=True)
        for i in range(3):
            (tmp_path / "docs" / f"u{i}.txt").write_text(" \n", encoding="utf-8")
        return TextDirReader(tmp_path / "docs")
    if kind == "parquet":
        pq.write_table(pa.table({"user": pa.array([], "string"), "text": pa.array([], "string")}),
                       tmp_path / "c.parquet")
        return ParquetReader(tmp_path / "c.parquet")
    return FrameReader(pd.DataFrame({"user": ["a", "b"], "text": ["", "\t"]}))


@pytest.mark.parametrize("kind,sequences", [("jsonl", False), ("jsonl", True),
                                            ("jsonl_files", False), ("text_folder", False),
                                            ("parquet", False), ("frame", True)])
def test_a_corpus_that_gives_no_document_is_the_same_error_on_both(cluster, tmp_path, kind,
                                                                   sequences):
    """Every line skipped (or none there): no user data, but the error that says so, the same
    on Dask (its workers' copies of the reader count the skips) as locally."""
    from dp_vocab.errors import CorpusError
    extractor = ItemExtractor(RegexTokenizer())
    errors = []
    for backend in (LocalBackend(), cluster):
        with pytest.raises(CorpusError, match=r"no document was read") as info:
            backend.load(_nothing_to_read(tmp_path, kind), extractor, sequences)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    skipped = {"jsonl": "all 40 lines", "jsonl_files": "all 80 lines",
               "text_folder": "all 3 files", "parquet": None, "frame": "all 2 rows"}[kind]
    assert (f"{skipped} were skipped" if skipped else "found no row holding a document") \
        in errors[0]


def test_our_local_workers_leave_ctrl_c_to_the_run(cluster):
    """The terminal's Ctrl-C reaches a LocalCluster's worker processes too; they ignore it (the
    run's process closes the cluster) instead of each printing a traceback."""
    import signal
    ignored = cluster.client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN)
    assert len(ignored) == 2 and all(ignored.values())


def test_ctrl_c_on_a_dask_run_leaves_no_worker_files(tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group) once the LocalCluster's workers hold
    their folders: the run exits 130, writes nothing, and leaves nothing in the temporary
    folder (no worker-*.dirlock, no dask-scratch-space: the workers' folders are the run's own
    temporary folder, removed as the cluster closes)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    corpus = tmp_path / "c.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:   # a few seconds of reading on the workers
        f.writelines(f'{{"user": "u{i % 3000}", "text": "word{i % 977} other{i % 331} {i}"}}\n'
                     for i in range(300_000))
    out = tmp_path / "out"
    exe = Path(sys.executable).parent / "dp-vocab"
    proc = subprocess.Popen([str(exe), "run", str(RECIPE_DIR / "quickstart.cfg"), "-o",
                             str(out), "-q", "--paths.corpus", str(corpus), "--run.backend",
                             "dask", "--run.n_workers", "1"], env={**os.environ, "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp.rglob("worker-*.dirlock")):
            assert proc.poll() is None, "the run ended before its workers started"
            assert time.monotonic() < deadline, "no worker started in 120 s"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err.decode(errors="replace")[-2000:]
    assert b"interrupted; nothing was written" in err
    assert not out.exists()
    assert sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*")) == []
