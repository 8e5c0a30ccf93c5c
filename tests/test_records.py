"""Everything a run writes or prints is post-processing of the release.

For every mechanism (and the count routes), neighbouring corpora D (with user X) and D' (without)
are each run many times with fresh OS randomness. Whenever the same release — released items and
any paid-for noisy counts — is seen under both, every output file and the console summary must
be byte-for-byte identical. A record that depends on the data beyond the release (a count of
spurious items, a union size, the number of users, timings...) makes two such records differ.

The corpora make coincidences likely: a few items every user holds (released almost surely),
X's own item (released with probability about δ) and, for DPNE, a bigram only X holds.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path

import pytest
from rich.console import Console

from dp_vocab.cli.display import summary_table
from dp_vocab.recipes import run_recipe

pytestmark = pytest.mark.slow

RUNS = 24  # per dataset; each case must see at least one release under both D and D'
# DPNE: "b b" is released in ≈ 21% of runs on D and ≈ 11% on D' (as a zero-weight candidate);
# 60 runs see both with probability ≈ 0.999, so a record that tells them apart is caught
RUNS_DPNE = 60

BASE = {
    "run": {"seed": None, "key": None},
    "corpus": {"@readers": "dp_vocab.jsonl.v1", "path": None},
    "items": {"@extractors": "dp_vocab.items.v1", "tokenizer": {"@tokenizers": "dp_vocab.regex.v1"}},
}


def mech(name, **kw):
    return {"@mechanisms": f"dp_vocab.{name}.v1", "epsilon": 4.0, "delta": 1e-5, **kw}


def _public(tmp_path):
    p = tmp_path / "public.tsv"
    p.write_text("the\t100\ncat\t50\nsat\t10\n", encoding="utf-8")
    return str(p)


def _public_list(tmp_path):
    p = tmp_path / "public_items.txt"
    p.write_text("the\ncat\nzebu\nunheld\n", encoding="utf-8")
    return str(p)


CASES = {
    "count_laplace": lambda t: {"mechanism": mech("count_laplace", max_items_per_user=3)},
    "count_laplace_noisy": lambda t: {"mechanism": mech("count_laplace", epsilon=30.0,
                                                        max_items_per_user=3, noisy_counts=True)},
    "count_gaussian": lambda t: {"mechanism": mech("count_gaussian", max_items_per_user=3)},
    "weighted_laplace": lambda t: {"mechanism": mech("weighted_laplace")},
    "weighted_gaussian": lambda t: {"mechanism": mech("weighted_gaussian")},
    "policy_laplace": lambda t: {"mechanism": mech("policy_laplace")},
    "policy_gaussian": lambda t: {"mechanism": mech("policy_gaussian")},
    "gw": lambda t: {"mechanism": mech("gw")},
    "gw_kt": lambda t: {"mechanism": mech("gw_kt", public_frequencies=_public(t))},
    "partition_optimal": lambda t: {"mechanism": mech("partition_optimal")},
    "dp_sips": lambda t: {"mechanism": mech("dp_sips")},
    # X's "zebu" is on the public list: released by BH under D (held) and D' (weight 0)
    "policy_gaussian_public": lambda t: {"mechanism": mech(
        "policy_gaussian_public", public_items=_public_list(t), public_fdr=0.3)},
    "dp_sips_public": lambda t: {"mechanism": mech(
        "dp_sips_public", public_items=_public_list(t), public_fdr=0.3)},
    "policy_gaussian_public_plain_bh": lambda t: {"mechanism": mech(
        "policy_gaussian_public", public_items=_public_list(t), public_fdr=0.3,
        public_adaptive=False)},
    "policy_gaussian_public_lambda": lambda t: {"mechanism": mech(
        "policy_gaussian_public", public_items=_public_list(t), public_fdr=0.3,
        public_lambda=0.6)},
    "top_k": lambda t: {"mechanism": mech("top_k", k=2)},
    "counts_stage": lambda t: {"mechanism": mech("policy_gaussian"),
                               "counts": {"@counts": "dp_vocab.discrete_laplace_counts.v1",
                                          "epsilon": 12.0, "max_items_per_user": 3,
                                          "max_count": 1}},
    # relative-frequency counts and a trained WordPiece with its model card
    "counts_normalised": lambda t: {
        "mechanism": mech("policy_gaussian"),
        "counts": {"@counts": "dp_vocab.normalised_gaussian_counts.v1", "epsilon": 100.0,
                   "delta": 1e-6, "max_items_per_user": 3, "scale": 2},
        "export": {"@exporters": "dp_vocab.hf_tokenizer.v1", "model": "wordpiece",
                   "vocab_size": 300}},
    "dpne": lambda t: {"mechanism": mech("dpne", epsilon=3.0, max_n=2, eta=0.2)},
    "dpne_policy": lambda t: {"mechanism": mech("dpne", epsilon=3.0, max_n=2, eta=0.2,
                                                policy="l2_descent")},
    # level 2 by adaptive BH over C_2 with a whole-release term (ngrams.md §3a–§3c)
    "dpne_bh": lambda t: {"mechanism": mech("dpne", epsilon=3.0, max_n=2, eta=0.2,
                                            policy="l2_descent", level_fdr=0.3,
                                            level_fdr_lambda=0.5, total_fdr=0.4)},
    # levels 2 and 3 by weighted BH over classes (ngrams.md §3d)
    "dpne_wbh": lambda t: {"mechanism": mech("dpne_public", epsilon=3.0, max_n=3, eta=0.2,
                                             policy="l2_descent", public_items=["a", "zz"],
                                             max_outside_items=1, level_fdr=0.3,
                                             level_fdr_lambda=0.5, level2_rank_power=1.0,
                                             level_block_power=1.0)},
    # "a" is on the list, "b" is not and each user keeps 1 unigram outside it (the outside cap)
    "dpne_public": lambda t: {"mechanism": mech("dpne_public", epsilon=3.0, max_n=2, eta=0.2,
                                                policy="l2_descent", public_items=["a", "zz"],
                                                max_outside_items=1)},
    # every exporter's files too (Unigram needs the published counts)
    "exports": lambda t: {"mechanism": mech("count_laplace", epsilon=30.0, max_items_per_user=3,
                                            noisy_counts=True),
                          "export": {
                              "hf": {"@exporters": "dp_vocab.hf_tokenizer.v1", "model": "unigram",
                                     "classic_files": True},
                              "spacy": {"@exporters": "dp_vocab.spacy.v1", "lang": "en",
                                        "pipeline": True}}},
    # a BPE smaller than vocab_size: its note (console and privacy.json) names sizes
    "export_bpe": lambda t: {"mechanism": mech("count_laplace", epsilon=30.0,
                                               max_items_per_user=3, noisy_counts=True),
                             "export": {"@exporters": "dp_vocab.hf_tokenizer.v1",
                                        "model": "bpe", "vocab_size": 5000}},
}


# X also holds a common item, so the released items' exact weights differ between D and D'
# (a record that leaked them would differ); with published counts the counts themselves differ,
# so there X holds only its own items (else no release would be seen under both)
X_SHARES = {"count_laplace_noisy": False, "counts_stage": False, "counts_normalised": False,
            "exports": False,
            "export_bpe": False}


def corpus_lines(case: str, with_x: bool) -> list[dict]:
    if case.startswith("dpne"):  # the reviewers' repro: "b b" is held by X alone
        docs = [{"user": f"u{i}", "text": "a b a a"} for i in range(200)]
        return docs + ([{"user": "x", "text": "b b a"}] if with_x else [])
    docs = [{"user": f"u{i}", "text": "the cat sat"} for i in range(300)]
    x_text = "the xylophonist zebu" if X_SHARES.get(case, True) else "xylophonist zebu"
    return docs + ([{"user": "x", "text": x_text}] if with_x else [])


def record_of(out: Path, result) -> str:
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
             if p.is_file()}
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(summary_table(result))
    for note in result.notes:   # printed after the summary
        console.print(note, markup=False)
    return repr(sorted(files.items())) + console.file.getvalue()   # raw bytes


@pytest.mark.parametrize("case", list(CASES))
def test_same_release_same_record_on_neighbouring_datasets(tmp_path, case):
    corpus = tmp_path / "corpus.jsonl"   # one path for D and D': the recipe records it
    out = tmp_path / "out"
    recipe = {**BASE, **CASES[case](tmp_path)}
    recipe["corpus"] = {**recipe["corpus"], "path": str(corpus)}
    seen: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for with_x in (True, False):
        corpus.write_text("\n".join(json.dumps(d) for d in corpus_lines(case, with_x)) + "\n",
                          encoding="utf-8")
        for _ in range(RUNS_DPNE if case.startswith("dpne") else RUNS):
            res = run_recipe(recipe, out, force=True)
            rel = res.release
            release = json.dumps([rel.items, rel.counts and sorted(rel.counts.items())])
            seen[release]["D" if with_x else "D'"].add(record_of(out, res))
    shared = {r: v for r, v in seen.items() if len(v) == 2}
    assert shared, f"{case}: no release seen under both D and D' (the test would be vacuous)"
    for release, records in shared.items():
        assert len(records["D"] | records["D'"]) == 1, (
            f"{case}: release {release[:80]} has different records on D and D'")


def test_the_json_writer_refuses_a_number_that_is_not_finite(tmp_path):
    """JSON has no NaN or Infinity: a record holding one is a bug, refused, not written."""
    from dp_vocab.export.output_dir import write_json
    write_json(tmp_path / "ok.json", {"epsilon": 1.0, "counts": [1, 2]})
    assert json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))["epsilon"] == 1.0
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            write_json(tmp_path / "bad.json", {"scale": [1.0, bad]})
