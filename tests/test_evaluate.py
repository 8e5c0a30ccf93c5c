"""dp-vocab evaluate: records, files, plots, report; non-private numbers stay in its outputs."""

import html
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dp_vocab import ItemSets, evaluate
from dp_vocab.cli import app
from dp_vocab.export.output_dir import MARKER
from dp_vocab.research.evaluation import write_report
from dp_vocab.ingest.corpora.bundled import PRESETS as RECIPE_DIR, SAMPLE



def toy():
    return ItemSets.from_user_items([(i, [f"w{j}" for j in range(40) if i % (j + 1) == 0])
                                     for i in range(2000)])


class _Imgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs)["src"])


def test_evaluate_records_and_report(tmp_path):
    import matplotlib.image as mpimg
    ev = evaluate(toy(), ["weighted_gaussian", "policy_gaussian"], [1.0, 4.0], repeats=2,
                  max_items_per_user=[5, 50], jobs=2)
    assert len(ev.runs) == 2 * 2 * 2 * 2 and len(ev.summary) == 8
    assert all(r["released"] >= 0 and r["seconds"] > 0 for r in ev.runs)
    big = {(s["mechanism"], s["epsilon"]): s["released_mean"] for s in ev.summary
           if s["max_items_per_user"] == 50}
    assert big[("policy_gaussian", 4.0)] >= big[("policy_gaussian", 1.0)]
    assert ev.non_private["union_size"] == 40
    files = write_report(ev, tmp_path / "ev")
    out = tmp_path / "ev"
    assert sorted(files) == sorted(p.name for p in out.iterdir() if p.name != MARKER)
    for png in out.glob("*.png"):
        img = mpimg.imread(png)
        assert img.shape[0] > 200 and img.shape[1] > 300
    parser = _Imgs()
    parser.feed((out / "report.html").read_text(encoding="utf-8"))
    assert len(parser.imgs) == 3 and all(s.startswith("data:image/png;base64,") for s in parser.imgs)
    assert "http" not in (out / "report.html").read_text()  # one file, no network
    assert "NON-PRIVATE" in (out / "results.json").read_text()
    assert (out / "results.csv").read_text().count("\n") == 9
    # strict JSON: a measure not taken (no holdout here) is null, never NaN
    text = (out / "results.json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"results.json holds {name}"))
    assert any(v is None for row in json.loads(text)["summary"] for v in row.values())


def test_evaluate_cli_on_the_sample(tmp_path):
    res = CliRunner().invoke(app, ["evaluate", str(SAMPLE), "--mechanisms",
                                   "count_laplace,gw,dpne", "--epsilon", "2,6", "--repeats", "2",
                                   "--holdout", "0.1", "-o", str(tmp_path / "e")])
    assert res.exit_code == 0, res.output
    assert "NON-PRIVATE" in res.output and "count_laplace" in res.output
    data = json.loads((tmp_path / "e" / "results.json").read_text())
    assert len(data["summary"]) == 6
    dpne = [s for s in data["summary"] if s["mechanism"] == "dpne"]
    assert dpne and all(s["released_mean"] > 0 for s in dpne)
    # held-out n-gram columns for dpne only (NON-PRIVATE): shares, unigrams covered most
    assert all(0 < s["coverage_n2"] <= s["coverage_n1"] <= 1 and 0 <= s["next_word_suggested"]
               <= 1 for s in dpne)
    # next to it, a NON-PRIVATE n-gram set of the same size per level (the most held n-grams)
    assert all(0 <= s["next_word_suggested_nonprivate"] <= 1 for s in dpne)
    assert "next word NP" in res.output
    assert not any("coverage_n1" in s for s in data["summary"] if s["mechanism"] != "dpne")


def test_evaluate_of_a_recipe_compares_its_own_mechanism_as_configured(tmp_path):
    """Without --mechanisms / --max-items-per-user, a recipe's mechanism joins the default
    comparison with the recipe's parameters and Δ0 (quickstart: the public variant, Δ0 1000)."""
    recipe = tmp_path / "r.cfg"
    text = (RECIPE_DIR / "quickstart.cfg").read_text()
    recipe.write_text(text.replace('corpus = "corpora/reddit_college_sample.jsonl.gz"',
                                   f'corpus = "{SAMPLE}"').replace("alpha = 2.0", "alpha = 3.0"))
    ev = evaluate(recipe, None, [3.0], repeats=1)
    by = {s["mechanism"]: s for s in ev.summary}
    assert list(by) == ["weighted_gaussian", "policy_laplace", "policy_gaussian", "gw",
                        "policy_gaussian_public"]
    assert {s["max_items_per_user"] for s in ev.summary} == {1000}
    own = [r for r in ev.runs if r["mechanism"] == "policy_gaussian_public"][0]
    assert own["alpha"] == 3.0   # the recipe's, not the default 2.0
    assert all("alpha" not in r for r in ev.runs if r["mechanism"] != "policy_gaussian_public")
    # asked for explicitly, the grid is the caller's (full registry names work too)
    ev = evaluate(recipe, ["dp_vocab.policy_gaussian_public.v1"], [3.0], repeats=1,
                  max_items_per_user=[50])
    assert [(s["mechanism"], s["max_items_per_user"]) for s in ev.summary] == \
        [("policy_gaussian_public", 50)]
    assert ev.runs[0]["alpha"] == 3.0
    # a recipe without Δ0 is at its mechanism's own default (partition_optimal: 1)
    head, rest = recipe.read_text().split("[mechanism]")
    recipe.write_text(head + '[mechanism]\n@mechanisms = "dp_vocab.partition_optimal.v1"\n'
                      'epsilon = ${budget.epsilon}\ndelta = ${budget.delta}\n\n[export]'
                      + rest.split("[export]")[1])
    ev = evaluate(recipe, ["gw"], [3.0], repeats=1)
    assert [(s["mechanism"], s["max_items_per_user"]) for s in ev.summary] == [("gw", 1)]


def test_dp_vocab_evaluate_stays_the_function():
    """The harness module is dp_vocab.research.evaluation: importing it (as the first call did) once
    replaced dp_vocab.evaluate with the module."""
    import inspect

    import dp_vocab
    import dp_vocab.research.evaluation  # noqa: F401
    assert callable(dp_vocab.evaluate) and "holdout" in inspect.signature(dp_vocab.evaluate).parameters
    assert "force" in inspect.signature(dp_vocab.run_recipe).parameters


def test_evaluate_reads_a_corpus_by_its_files_name_and_refuses_frames(tmp_path):
    import polars as pl
    from dp_vocab.errors import ParameterError
    df = pl.DataFrame({"user": [f"u{i % 300}" for i in range(3000)],
                       "text": [f"the cat sat {i % 5}" for i in range(3000)]})
    df.write_csv(tmp_path / "c.csv")
    df.write_parquet(tmp_path / "c.parquet")
    sizes = [evaluate(tmp_path / name, ["policy_gaussian"], [3.0], repeats=1).non_private
             ["union_size"] for name in ("c.csv", "c.parquet")]
    assert sizes == [8, 8]
    with pytest.raises(ParameterError, match=r"source: .*got 'a DataFrame'.*itemsets_from_frame"):
        evaluate(df, ["gw"], [3.0])


def test_evaluate_rejects_unknown_mechanisms(tmp_path):
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match="mechanism"):
        evaluate(toy(), ["nope"], [1.0])


def test_evaluate_heldout_utility_columns():
    """NON-PRIVATE utility columns: true items + false positives = released; coverage in [0, 1]
    and rising with the vocabulary; the non-private tokenizer of the same size is at least as
    short per word as one built from fewer items."""
    from dp_vocab.research.heldout import VocabularyUtility, split_users
    ev = evaluate(toy(), ["policy_gaussian"], [1.0, 8.0], repeats=2, holdout=0.25)
    for r in ev.runs:
        assert r["true_items"] + r["false_positives"] == r["released"]
        assert 0.0 <= r["heldout_coverage"] <= 1.0
        assert ("tokens_per_word" in r) == (r["repeat"] == 0)
    by_eps = {s["epsilon"]: s for s in ev.summary}
    assert by_eps[8.0]["heldout_coverage_mean"] >= by_eps[1.0]["heldout_coverage_mean"]
    # the console's utility table says tok/w is not a mean over the repeats
    from rich.console import Console
    console = Console(file=io.StringIO(), width=400, color_system=None)
    console.print(ev.table())
    assert "tok/w: the first repeat's release only" in console.file.getvalue()
    data = toy()
    train, held = split_users(data, 0.25)
    assert train.n_users + held.n_users == data.n_users and held.n_users > 300
    assert set(train.user_ids).isdisjoint(held.user_ids)
    assert split_users(data, 0.25)[1].user_ids == held.user_ids     # a fixed public split
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    u = VocabularyUtility(train, held, ItemExtractor(RegexTokenizer()).describe())
    every = [f"w{j}" for j in range(40)]
    full = u.measure(every + ["never_seen"])
    assert full["true_items"] == 40 and full["false_positives"] == 1
    assert full["heldout_coverage"] == 1.0 and full["tokens_per_word"] == 1.0
    # the non-private vocabulary is the 41 most frequent training items (all 40 here)
    assert full["tokens_per_word_nonprivate"] == 1.0
    few = u.measure(["w0"])
    assert few["heldout_coverage"] < 1.0 and few["tokens_per_word"] > 1.0


def test_evaluate_rejects_bad_holdout():
    from dp_vocab.errors import ParameterError
    for bad in (-0.1, 1.0, "x", True):
        with pytest.raises(ParameterError, match="holdout"):
            evaluate(toy(), ["policy_gaussian"], [1.0], holdout=bad)


def test_ngram_coverage_on_held_out_users_by_hand():
    from dp_vocab.research.heldout import ngram_coverage
    from dp_vocab.ingest.extract import extract_sequences
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    held = extract_sequences([("h1", "a b c a b"), ("h2", "c a")],
                             ItemExtractor(RegexTokenizer()))
    cov = ngram_coverage(["a", "b", "a b", "b c", "c a b", "zz", "zz a"], held, max_n=3)
    # unigrams: a b c a b | c a -> a,b,a,b,a released: 5 of 7
    assert cov["coverage_n1"] == pytest.approx(5 / 7)
    # bigrams: ab bc ca ab | ca -> ab, bc, ab: 3 of 5 (no bigram across the two documents)
    assert cov["coverage_n2"] == pytest.approx(3 / 5)
    # trigrams: abc bca cab -> cab: 1 of 3
    assert cov["coverage_n3"] == pytest.approx(1 / 3)
    # words after the first: b c a b | a -> b (ab), c (bc), a (no: "c a" not released),
    # b (ab, cab), a (no): 3 of 5
    assert cov["next_word_suggested"] == pytest.approx(3 / 5)


def test_nonprivate_same_size_takes_the_most_held_ngrams_per_level_by_hand():
    from dp_vocab.research.heldout import nonprivate_same_size
    from dp_vocab.ingest.extract import extract_sequences
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    train = extract_sequences([("u1", "a b c a b"), ("u2", "c a"), ("u3", "c a b"),
                               ("u4", "b c")], ItemExtractor(RegexTokenizer()))
    # unigrams: c held by 4 users (a, b by 3) -> c; bigrams: "c a" by 3 users, "a b" by 2 with
    # 3 occurrences, "b c" by 2 with 2 -> "c a", "a b"; trigrams: "c a b" by 2 (u1, u3)
    assert nonprivate_same_size(train, [1, 2, 1, 0]) == ["c", "c a", "a b", "c a b"]
    # no n-gram across two documents of a user
    two = extract_sequences([("u1", "x y"), ("u1", "z")], ItemExtractor(RegexTokenizer()))
    assert nonprivate_same_size(two, [0, 5]) == ["x y"]


def test_held_out_split_of_token_sequences_is_by_user_and_disjoint():
    from dp_vocab.research.heldout import split_users
    from dp_vocab.ingest.extract import extract_sequences
    from dp_vocab.ingest.text.items import ItemExtractor
    from dp_vocab.ingest.text.tokenizers import RegexTokenizer
    c = extract_sequences([(f"u{i}", f"w{i} x") for i in range(200)],
                          ItemExtractor(RegexTokenizer()))
    train, held = split_users(c, 0.1)
    assert set(train.user_ids).isdisjoint(held.user_ids)
    assert set(train.user_ids) | set(held.user_ids) == set(c.user_ids)
    assert 5 <= held.n_users <= 40   # one in ten, by hash
    assert split_users(c, 0.1)[1].user_ids == held.user_ids


def test_report_explains_itself(tmp_path):
    """report.html: the run's context, every column explained, one number format per kind of
    column (no 1.42e+03), and captions that describe the plots rather than name their files."""
    import re
    import dp_vocab
    corpus = tmp_path / "posts.jsonl"
    corpus.write_text("".join(json.dumps({"user": f"u{i}", "text": " ".join(
        f"w{j}" for j in range(60) if i % (j + 1) == 0) + " the"}) + "\n" for i in range(3000)),
        encoding="utf-8")
    ev = evaluate(corpus, ["policy_gaussian", "count_laplace"], [1.0, 8.0], repeats=2,
                  holdout=0.2)
    write_report(ev, tmp_path / "ev")
    text = (tmp_path / "ev" / "report.html").read_text(encoding="utf-8")
    header = text.split('<table class="ctx">', 1)[1].split("</table>", 1)[0]
    assert str(corpus) in header and "20% of users" in header
    users = ev.context["users_NON_PRIVATE"]
    assert users == 3000 and f"{users:,}" in header
    assert f">{dp_vocab.__version__}<" in header
    assert re.search(r">\d{4}-\d\d-\d\d \d\d:\d\d UTC<", header)
    # every column head of the results table has its explanation
    table = text.split("<h2>Results</h2>", 1)[1].split("</table>", 1)[0]
    heads = [h.split("<br>")[0] for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    glossary = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", text)
    explained = {html.unescape(t) for t, d in glossary if len(d) > 20}
    for h in heads:
        h = html.unescape(h).replace(" (mean ± sd)", "")
        assert h in explained, f"column {h!r} is not explained"
    assert "held-out coverage" in heads and "tokens per word" in heads
    cells = re.findall(r"<td>(.*?)</td>", table)
    assert not any(re.search(r"\de[+-]\d", c) for c in cells if c != "1e-05"), cells
    assert any(c.endswith("%") for c in cells)   # shares as percentages
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert len(captions) == 2   # one Δ0 value: no plot against Δ0 (a single point per line)
    assert not (tmp_path / "ev" / "size_vs_max_items.png").exists()
    assert not any(c.endswith(".png") for c in captions)
    assert all(len(c) > 80 for c in captions)
    assert "Released vocabulary size against ε" in captions[0]


def test_timings_leave_the_first_compile_out(monkeypatch):
    """Every mechanism runs once untimed before its timed runs (numba compiles on a first
    call): one extra release per mechanism and process, not per configuration."""
    from dp_vocab.research import evaluation
    from dp_vocab.registry import registry
    calls = {}
    for short in ("weighted_gaussian", "policy_gaussian"):
        cls = registry.mechanisms.get(f"dp_vocab.{short}.v1")
        original = cls.release

        def counted(self, *args, _original=original, _short=short, **kwargs):
            calls[_short] = calls.get(_short, 0) + 1
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(cls, "release", counted)
    monkeypatch.setattr(evaluation, "_WARM", set())
    evaluate(toy(), ["weighted_gaussian", "policy_gaussian"], [1.0, 4.0], repeats=3)
    assert calls == {"weighted_gaussian": 2 * 3 + 1, "policy_gaussian": 2 * 3 + 1}


def _small_wordpiece_recipe(tmp_path):
    """private-wordpiece on 400 users writing 12 random college words each, 400 tokens."""
    import random
    from dp_vocab.ingest.corpora.bundled import PRESETS
    rng = random.Random(5)
    words = "the a college class exam professor student campus dorm major essay".split()
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"user": f"u{i}", "text": " ".join(
        rng.choice(words) for _ in range(12))}) for i in range(400)) + "\n", encoding="utf-8")
    recipe = tmp_path / "wp.cfg"
    recipe.write_text((PRESETS / "private-wordpiece.cfg").read_text(encoding="utf-8")
                      .replace('corpus = "corpora/reddit_college_sample.jsonl.gz"',
                               f'corpus = "{corpus.as_posix()}"')
                      .replace("vocab_size = 8000", "vocab_size = 400"), encoding="utf-8")
    return recipe


def test_evaluate_scores_a_recipes_tokenizer_against_the_non_private_one(tmp_path):
    """A recipe exporting a Hugging Face tokenizer, with held-out users: per ε, its tokenizer's
    tokens per held-out word next to the non-private tokenizer of the same pipeline, model and
    size, in the console table, results.json and report.html (all NON-PRIVATE)."""
    from dp_vocab.research.evaluation import write_report
    recipe = _small_wordpiece_recipe(tmp_path)
    steps: list[str] = []
    ev = evaluate(str(recipe), ["policy_gaussian"], [2.0, 8.0], holdout=0.25,
                  on_step=steps.append)
    assert [r["epsilon"] for r in ev.tokenizers] == [2.0, 8.0]
    # each long step is announced (the non-private trainer once per size it is asked for)
    sizes = list(dict.fromkeys(r["size"] for r in ev.tokenizers))
    assert [s for s in steps if "recipe" in s] == [
        f"tokenizers: the recipe at ε = {e} on the training users" for e in (2, 8)]
    assert [s.split(" tokens")[0] for s in steps if "non-private" in s] == [
        f"tokenizers: training the non-private tokenizer of {n:,}" for n in sizes]
    for r in ev.tokenizers:
        assert r["size"] <= 400 and 1.0 <= r["tokens_per_word"] < 3.0
        assert 1.0 <= r["tokens_per_word_nonprivate"] <= r["tokens_per_word"] * 1.5
        assert 0.0 <= r["unknown_rate"] < 0.01
    files = write_report(ev, tmp_path / "report")
    assert "report.html" in files
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "The exported tokenizer on held-out users" in page and "×" in page
    saved = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    assert saved["tokenizers_NON_PRIVATE"] == ev.tokenizers
    # without a held-out share (or without an HF export) there is nothing to compare
    assert evaluate(str(recipe), ["policy_gaussian"], [2.0]).tokenizers == []


def test_a_non_private_trainer_that_stops_leaves_its_columns_empty(tmp_path, monkeypatch):
    """tokenizers' own trainer can stop on a corpus (its Unigram trainer panics on some source
    code): the comparison says so and shows n/a in the non-private columns, and the private
    tokenizer's scores are still reported and saved."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from dp_vocab.research import heldout
    from dp_vocab.research.evaluation import tokenizer_rows, write_report

    class Panic(BaseException):   # what a Rust panic raises in Python
        pass

    class Stops(list):
        def __iter__(self):
            yield "xylophone secret"
            raise Panic("likelihood is NAN")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    with pytest.raises(heldout.BaselineFailed) as info:
        heldout.nonprivate_tokenizer(tok, Stops(["xylophone secret"]), 100)
    message = str(info.value)   # no text, and not the trainer's own message either
    assert "WordPiece trainer stopped" in message
    assert "xylophone" not in message and "likelihood" not in message

    def stops(*args):
        raise heldout.BaselineFailed("tokenizers' WordPiece trainer stopped")
    monkeypatch.setattr(heldout, "nonprivate_tokenizer", stops)
    recipe = _small_wordpiece_recipe(tmp_path)
    with pytest.warns(UserWarning, match="WordPiece trainer stopped: its columns say n/a"):
        ev = evaluate(str(recipe), ["policy_gaussian"], [2.0], holdout=0.25)
    [row] = ev.tokenizers
    assert 1.0 <= row["tokens_per_word"] < 3.0
    assert row["tokens_per_word_nonprivate"] is None and row["unknown_rate_nonprivate"] is None
    assert tokenizer_rows(ev)[0][3:5] == ["n/a", "n/a"] and tokenizer_rows(ev)[0][6] == "n/a"
    write_report(ev, tmp_path / "report")
    saved = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    assert saved["tokenizers_NON_PRIVATE"][0]["tokens_per_word_nonprivate"] is None


def test_evaluate_cli_takes_recipe_overrides_as_run_does(tmp_path):
    """--section.key VALUE changes the recipe evaluate reads (its corpus, fields and Δ0 here),
    and a bad one is the error run gives, in the same words."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"author": f"u{i}", "body": f"the cat sat {i % 7}"})
                              + "\n" for i in range(400)), encoding="utf-8")
    overrides = ["--paths.corpus", str(corpus), "--corpus.user_field", "author",
                 "--corpus.text_field", "body", "--mechanism.max_items_per_user", "7"]
    res = CliRunner().invoke(app, ["evaluate", "quickstart", "--mechanisms", "policy_gaussian",
                                   "--epsilon", "3", "--repeats", "1", "-o",
                                   str(tmp_path / "e"), *overrides])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "e" / "results.json").read_text())
    assert [s["max_items_per_user"] for s in data["summary"]] == [7]
    assert data["context"]["users_NON_PRIVATE"] == 400
    assert "with overrides paths.corpus" in data["context"]["source"] \
        and str(corpus) in data["context"]["source"]
    for bad in (["--budjet.epsilon", "1"], ["--mechanism.nope", "1"], ["--epsilonn", "1"]):
        ran = CliRunner().invoke(app, ["run", "quickstart", "-o", str(tmp_path / "r"), *bad])
        evaluated = CliRunner().invoke(app, ["evaluate", "quickstart", "--mechanisms", "gw",
                                             "-o", str(tmp_path / "e2"), *bad])
        assert ran.exit_code == evaluated.exit_code == 2, evaluated.output
        error = [ln for ln in ran.stderr.splitlines() if ln.startswith("error:")]
        assert len(error) == 1 and error == [ln for ln in evaluated.stderr.splitlines()
                                             if ln.startswith("error:")], evaluated.stderr
    assert not (tmp_path / "r").exists() and not (tmp_path / "e2").exists()


def test_evaluate_refuses_overrides_of_a_corpus_file_but_its_readers(tmp_path):
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match=r"^overrides: expected only its reader's settings "
                                             r"for a corpus file .*got \['corpus\.path', "
                                             r"'items\.n_max'\]\. For other values, evaluate a "
                                             r"recipe"):
        evaluate(SAMPLE, ["gw"], [3.0], overrides={"corpus.text_field": "body",
                                                    "items.n_max": 2, "corpus.path": "x"})
    # ε, δ and Δ0 have options of their own, on a corpus file as on a recipe
    for key, says in (("budget.epsilon", "Set ε with --epsilon"),
                      ("mechanism.max_items_per_user", "Set Δ0 with --max-items-per-user")):
        with pytest.raises(ParameterError, match=rf"^--{key}: .*{says}"):
            evaluate(SAMPLE, ["gw"], [3.0], overrides={key: 5})


def test_a_corpus_file_takes_its_readers_settings_as_a_recipe_does(tmp_path):
    """The reader's hints name recipe keys (--corpus.user_field): on a corpus file, evaluate
    takes them, as overrides of the reader its name calls for, or of another one."""
    from dp_vocab.errors import CorpusError
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"author": f"u{i}", "body": "the cat sat"}) + "\n"
                              for i in range(40)), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c\.jsonl:1: field 'user': missing, and so is field "
                                          r"'text' .*--corpus\.user_field KEY --corpus\."
                                          r"text_field KEY on the command line"):
        evaluate(str(corpus), ["gw"], [3.0], repeats=1)
    fields = {"corpus.user_field": "author", "corpus.text_field": "body"}
    ev = evaluate(str(corpus), ["gw"], [3.0], repeats=1, overrides=fields)
    assert ev.non_private["union_size"] == 3
    # the report says what one user is, as privacy.json does for a run
    assert ev.context["one_user"] == "all documents with the same value in field 'author'"
    write_report(ev, tmp_path / "rep")
    assert "field &#x27;author&#x27;" in (tmp_path / "rep" / "report.html").read_text("utf-8")
    ev = evaluate("quickstart", ["gw"], [3.0], repeats=1,
                  overrides={"paths.corpus": str(corpus), **fields})
    assert ev.non_private["union_size"] == 3
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(5):
        (docs / f"u{i}.txt").write_text("a b", encoding="utf-8")
    ev = evaluate(str(docs), ["gw"], [3.0], repeats=1,
                  overrides={"corpus.@readers": "dp_vocab.text_folder.v1"})
    assert ev.non_private["union_size"] == 2
    assert ev.context["one_user"].startswith("one file matching '*.txt'")
    res = CliRunner().invoke(app, ["evaluate", str(docs), "--mechanisms", "gw", "--repeats", "1",
                                   "--corpus.@readers", "dp_vocab.text_folder.v1",
                                   "-o", str(docs / "report")], terminal_width=400)
    assert res.exit_code == 2 and "the corpus reader searches" in res.output, res.output


@pytest.mark.parametrize("key, value, says", [
    ("budget.epsilon", 5, "--epsilon"), ("mechanism.delta", 0.5, "--delta"),
    ("run.seed", 3, "reads only [paths], [corpus], [items] and [mechanism]"),
    ("export.vocab_size", 10, "reads only"),
    ("mechanism.max_items_per_user", 50, "Give Δ0 once")])
def test_evaluate_refuses_an_override_it_would_not_use(key, value, says, monkeypatch):
    """An override evaluate would ignore is refused before any data is read, so the report
    never lists one that did nothing."""
    import dp_vocab.research.evaluation as ev
    monkeypatch.setattr(ev, "_load", lambda *a, **k: pytest.fail("the corpus was read"))
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match=rf"^--{re.escape(key)}: .*{re.escape(says)}"):
        evaluate("quickstart", ["gw"], [1.0], repeats=1, overrides={key: value},
                 max_items_per_user=[10] if key.endswith("per_user") else None)


def test_evaluate_with_holdout_checks_the_recipe_runs_before_reading(monkeypatch):
    """With --holdout on a tokenizer recipe its runs read every section: a bad [export] value
    is the run's own error, raised before the corpus is read."""
    import dp_vocab.research.evaluation as ev
    monkeypatch.setattr(ev, "_load", lambda *a, **k: pytest.fail("the corpus was read"))
    from dp_vocab.errors import ParameterError
    with pytest.raises(ParameterError, match=r"vocab_size"):
        evaluate("private-bpe", ["gw"], [1.0], repeats=1, holdout=0.2,
                 overrides={"export.vocab_size": 10})


def test_evaluate_output_inside_an_overridden_text_folder_is_refused(tmp_path):
    """The corpus an override names is protected as a run protects it: a report written into
    the folder the reader searches would be read as documents next time."""
    folder = tmp_path / "docs"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "a.txt").write_text("the cat sat", encoding="utf-8")
    cfg = tmp_path / "txt.cfg"
    jsonl = ('@readers = "dp_vocab.jsonl.v1"\npath = ${paths.corpus}\nuser_field = "user"\n'
             'text_field = "text"\n')
    text = (RECIPE_DIR / "quickstart.cfg").read_text(encoding="utf-8")
    assert jsonl in text
    cfg.write_text(text.replace(jsonl, '@readers = "dp_vocab.text_folder.v1"\n'
                                       'path = ${paths.corpus}\npattern = "**/*.txt"\n'),
                   encoding="utf-8")
    res = CliRunner().invoke(app, ["evaluate", str(cfg), "--mechanisms", "gw", "--epsilon", "1",
                                   "-o", str(folder / "ev"), "--paths.corpus", str(folder)])
    assert res.exit_code == 2 and "whose sub-folders the corpus reader searches" in res.stderr, \
        res.output
    assert not (folder / "ev").exists()
