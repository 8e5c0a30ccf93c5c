"""The hostile-input table: every input class an attacker or a careless user tried ends with a
correct run, or with exit code != 0 and ONE line ``error: ...`` naming the file:line, field or
parameter; never a traceback, never a private value on the console, nothing left behind in the
output's parent; and memory stays bounded (memory rows run in a subprocess under an
address-space limit, with their peak RSS compared to a normal run's).

Rows run in-process through the CLI (typer's CliRunner) unless they measure memory.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from dp_vocab.cli import app

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("hostile_table")

REPO = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).parent / "dp-vocab"
SECRET = "Alice Secret"          # a private value that must never reach the console
runner = CliRunner()

RECIPE = """
[paths]
corpus = "{corpus}"

[budget]
epsilon = 3.0
delta = 1e-5

[corpus]
{reader}
path = ${{paths.corpus}}
{reader_args}

[items]
@extractors = "dp_vocab.items.v1"
{items_args}

[items.tokenizer]
@tokenizers = "dp_vocab.regex.v1"
{tokenizer_args}

[mechanism]
@mechanisms = "dp_vocab.weighted_gaussian.v1"
epsilon = ${{budget.epsilon}}
delta = ${{budget.delta}}
max_items_per_user = 10
{extra}
"""


def recipe(d: Path, corpus: str, reader: str = "jsonl", reader_args: str = "",
           items_args: str = "", extra: str = "", name: str = "r.cfg",
           tokenizer_args: str = "") -> str:
    text = RECIPE.format(corpus=corpus, reader=f'@readers = "dp_vocab.{reader}.v1"',
                         reader_args=reader_args, items_args=items_args, extra=extra,
                         tokenizer_args=tokenizer_args)
    (d / name).write_text(text, encoding="utf-8")
    return str(d / name)


def users_jsonl(d: Path, n: int = 60, name: str = "c.jsonl") -> str:
    with open(d / name, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"user": f"u{i}", "text": f"the cat sat on the mat {i}"}) + "\n")
    return str(d / name)


def users_csv(d: Path, rows: list[str], name: str = "c.csv", prefix: bytes = b"") -> str:
    (d / name).write_bytes(prefix + ("user,text\n" + "".join(r + "\n" for r in rows)).encode())
    return str(d / name)


def many_users_csv_rows(n: int = 60) -> list[str]:
    return [f"u{i},the cat sat {i}" for i in range(n)]


def _parquet(d: Path, columns: dict) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table(columns), d / "c.parquet")
    return str(d / "c.parquet")


def _arrow(d: Path, columns: dict) -> str:
    import pyarrow as pa
    table = pa.table(columns)
    with pa.OSFile(str(d / "c.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return str(d / "c.arrow")


@dataclass
class Case:
    """``make(inputs_dir) -> argv``; the output (if any) is ``{out}``: out/o, in a parent that
    must hold nothing else afterwards (no temporary or .old-* directories)."""
    id: str
    make: Callable[[Path], list[str]]
    code: int | None = 2                    # None: a correct run or a clean error, both allowed
    message: str | None = None              # regex the one error line must match
    check: Callable[[Path, str], None] | None = None   # (output dir, stderr) for extra checks
    cwd: str | None = None                  # run from this sub-path of the test directory
    marks: tuple = field(default_factory=tuple)


def run(*args) -> list[str]:
    return ["run", *args, "-q"]


def _csv_unterminated(d):
    rows = many_users_csv_rows(5) + ['u5,"an opening quote never closed'] + \
        many_users_csv_rows(295)
    return run(recipe(d, users_csv(d, rows), reader="csv"), "-o", "{out}")


def _csv_bom(d):
    return run(recipe(d, users_csv(d, many_users_csv_rows(), prefix=b"\xef\xbb\xbf"),
                      reader="csv"), "-o", "{out}")


def _csv_bad_utf8_line8(d):
    (d / "c.csv").write_bytes(b"user,text\n" + b"".join(f"u{i},word {i}\n".encode()
                                                        for i in range(6))
                              + b"u6,caf\xe9\n" + b"u7,more\n")
    return run(recipe(d, str(d / "c.csv"), reader="csv"), "-o", "{out}")


def _csv_long_line(d):
    rows = many_users_csv_rows(3) + ["u3," + "x" * 5000]
    return run(recipe(d, users_csv(d, rows), reader="csv", reader_args="max_line_bytes = 1000"),
               "-o", "{out}")


def _csv_long_quoted_field(d):
    rows = many_users_csv_rows(3) + ['u3,"' + "\n".join(["y" * 50] * 100) + '"']
    return run(recipe(d, users_csv(d, rows), reader="csv", reader_args="max_line_bytes = 1000"),
               "-o", "{out}")


def _csv_no_header(d):
    (d / "c.csv").write_text(f"{SECRET},hello\n", encoding="utf-8")
    return run(recipe(d, str(d / "c.csv"), reader="csv"), "-o", "{out}")


def _jsonl_line(d, line: str, name="c.jsonl"):
    users_jsonl(d, name=name)
    with open(d / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")
    return run(recipe(d, str(d / name)), "-o", "{out}")


def _gz_bitflip(d):
    rows = [json.dumps({"user": f"u{i}", "text": f"word{i % 50} and more words {i}"})
            for i in range(3000)]
    data = bytearray(gzip.compress(("\n".join(rows) + "\n").encode()))
    data[len(data) // 2] ^= 0x10
    (d / "c.jsonl.gz").write_bytes(bytes(data))
    return run(recipe(d, str(d / "c.jsonl.gz")), "-o", "{out}")


def _gz_truncated(d):
    rows = [json.dumps({"user": f"u{i}", "text": f"word{i % 50} {i}"}) for i in range(3000)]
    data = gzip.compress(("\n".join(rows) + "\n").encode())
    (d / "c.jsonl.gz").write_bytes(data[: len(data) // 2])
    return run(recipe(d, str(d / "c.jsonl.gz")), "-o", "{out}")


def _empty_corpus(d, text=""):
    (d / "c.jsonl").write_text(text, encoding="utf-8")
    return run(recipe(d, str(d / "c.jsonl")), "-o", "{out}")


def _mechanism_without_budget(d):
    path = Path(recipe(d, users_jsonl(d)))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("epsilon = ${budget.epsilon}\n", "")
                    .replace("delta = ${budget.delta}\n", ""), encoding="utf-8")
    return run(str(path), "-o", "{out}")


def _few_users(d):
    return run(recipe(d, users_jsonl(d, n=3)), "-o", "{out}")


def _every_line_skipped(d):
    """on_error = "skip" with a text field the corpus does not have: every line is skipped."""
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for i in range(60):
            f.write(json.dumps({"user": f"{SECRET} {i}", "text": SECRET}) + "\n")
    return run(recipe(d, str(d / "c.jsonl"), reader_args='on_error = "skip"'), "-o", "{out}",
               "--corpus.text_field", "body")


def _blank_documents(d):
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for i in range(60):
            f.write(json.dumps({"user": f"{SECRET} {i}", "text": " \n\t"}) + "\n")
    return run(recipe(d, str(d / "c.jsonl")), "-o", "{out}")


def _mixed_ids(d):
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for i in range(60):
            f.write(json.dumps({"user": 7 if i == 0 else "7", "text": "the cat"}) + "\n")
    return run(recipe(d, str(d / "c.jsonl")), "-o", "{out}")


def _skip_mode(d):
    users_jsonl(d)
    with open(d / "c.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"user": {"name": SECRET}, "text": "x"}) + "\n")
        f.write(json.dumps({"user": "u1", "text": [SECRET]}) + "\n")
        f.write(SECRET + "\n")
    return ["run", recipe(d, str(d / "c.jsonl"), reader_args='on_error = "skip"'),
            "-o", "{out}"]


def _text_folder(d, pattern="*.txt", files=None, reader_args=""):
    folder = d / "docs"
    folder.mkdir()
    for name, data in (files or {f"u{i}.txt": b"the cat sat" for i in range(60)}).items():
        (folder / name).write_bytes(data)
    args = f'pattern = "{pattern}"\n' + reader_args
    return run(recipe(d, str(folder), reader="text_folder", reader_args=args), "-o", "{out}")


def _bad_recipe_bytes(d, data: bytes):
    users_jsonl(d)
    (d / "bad.cfg").write_bytes(data)
    return run(str(d / "bad.cfg"), "-o", "{out}")


def _misspelt_section(d):
    path = recipe(d, users_jsonl(d))
    text = Path(path).read_text().replace("[budget]", "[budjet]")
    Path(path).write_text(text)
    return run(path, "-o", "{out}")


def _previous_output(d, name="prev"):
    """A real previous dp-vocab output (run in-process), for the --force rows."""
    res = runner.invoke(app, run(recipe(d, users_jsonl(d)), "-o", str(d / name)))
    assert res.exit_code == 0, res.output
    return d / name


def _force_unrelated(d):
    (d / "mine").mkdir()
    (d / "mine" / "thesis.tex").write_text("years of work")
    return run(recipe(d, users_jsonl(d)), "-o", str(d / "mine"), "--force")


def _force_previous_output_with_extra_file(d):
    prev = _previous_output(d)
    (prev / "notes.txt").write_text("added by hand")
    return run(recipe(d, users_jsonl(d)), "-o", str(prev), "--force")


def _force_cwd(d):
    _previous_output(d, "here")
    return run(recipe(d, users_jsonl(d)), "-o", ".", "--force")


def _force_ancestor_of_cwd(d):
    prev = _previous_output(d, "here")
    (prev / "sub").mkdir()  # (the cwd of this row)
    return run(recipe(d, users_jsonl(d)), "-o", "..", "--force")


def _output_contains_corpus(d):
    (d / "data").mkdir()
    corpus = users_jsonl(d / "data")
    return run(recipe(d, corpus), "-o", str(d / "data"), "--force")


def _output_is_file(d):
    (d / "f").write_text("x")
    return run(recipe(d, users_jsonl(d)), "-o", str(d / "f"), "--force")


def _output_exists(d):
    _previous_output(d)
    return run(recipe(d, users_jsonl(d)), "-o", str(d / "prev"))


def _evaluate(d, *args, corpus=True):
    src = users_jsonl(d) if corpus else str(d / "c.jsonl")
    if not corpus:
        (d / "c.jsonl").write_text("")
    return ["evaluate", src, "-o", "{out}", "--repeats", "1", "--mechanisms",
            "weighted_gaussian", *args]


def _audit(*args):
    return lambda d: ["audit", "weighted_gaussian", "--runs", "3", "--canary-items", "5", *args]


def _exporters(d, block):
    return run(recipe(d, users_jsonl(d), extra=block), "-o", "{out}")


def _released_item_with(d, text):
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for i in range(300):
            f.write(json.dumps({"user": f"u{i}", "text": text}) + "\n")
    return run(recipe(d, str(d / "c.jsonl"), tokenizer_args='pattern = "[^ ]+"'), "-o", "{out}")


# characters a careless or hostile writer puts in text: zero-width and joiner marks, a combining
# accent alone and on a letter, a ligature, emoji with a skin tone and a flag, a line separator,
# bidi overrides, a letter NFKC splits, Cyrillic and ideographs
HOSTILE_CHARACTERS = ("zero\u200bwidth \u200djoin e\u0301 lone \u0301 \ufb01ne 👍🏾 🇫🇷 "
                      "line\u2028sep \u202eevil\u202c \u0149 Привет 中文字")


def _tokenizer_recipe_on_characters(name: str):
    """A shipped tokenizer recipe (each extracts with a ``_parts`` kind) on 300 users who all
    write ``HOSTILE_CHARACTERS``. A two-word public list and no public prior keep the run short
    (neither is hostile input; the prior's table is the slow part of an export)."""
    def make(d):
        with open(d / "c.jsonl", "w", encoding="utf-8") as f:
            for i in range(300):
                f.write(json.dumps({"user": f"u{i}", "text": HOSTILE_CHARACTERS}) + "\n")
        (d / "p.txt").write_text("the\nline\n", encoding="utf-8")
        return run(name, "-o", "{out}", "--paths.corpus", str(d / "c.jsonl"),
                   "--mechanism.public_items", str(d / "p.txt"), "--export.vocab_size", "600",
                   "--export.public_prior", "null")
    return make


def _moved_tokenizer_reads_characters(exact: bool):
    """The exported ``hf/`` loads after a move, with ``tokenizers`` and ``AutoTokenizer`` alike,
    and decodes the characters (byte-level BPE exactly: it has no normaliser)."""
    def check(out: Path, err: str):
        import shutil
        from tokenizers import Tokenizer
        from transformers import AutoTokenizer
        moved = out.parent.parent / "moved"
        shutil.copytree(out / "hf", moved)
        tok, auto = Tokenizer.from_file(str(moved / "tokenizer.json")), \
            AutoTokenizer.from_pretrained(str(moved))
        ids = tok.encode(HOSTILE_CHARACTERS, add_special_tokens=False).ids
        assert ids and auto(HOSTILE_CHARACTERS, add_special_tokens=False)["input_ids"] == ids
        decoded = tok.decode(ids)
        # WordPiece's BERT normaliser lower-cases
        assert decoded == HOSTILE_CHARACTERS if exact else "привет" in decoded.lower(), decoded
    return check


def _ok_vocab(expect: set):
    def check(out: Path, err: str):
        vocab = set((out / "vocab.txt").read_text(encoding="utf-8").splitlines())
        assert expect <= vocab, vocab
    return check


def _empty_release(out: Path, err: str):
    assert (out / "vocab.txt").read_text(encoding="utf-8") == ""
    assert "released 0 items" in err


def _mixed_warning(out: Path, err: str):
    assert "user ids of both kinds" in err and "NON-PRIVATE" in err
    assert '"7"' not in err and " 7 " not in err


def _skip_notice(out: Path, err: str):
    assert "NON-PRIVATE operator diagnostic" in err and "skipped 3" in err
    record = (out / "privacy.json").read_text(encoding="utf-8")
    assert "skipped" not in record and "malformed" not in record and SECRET not in record


CASES = [
    # ---- corpus: silent wrong results and vague errors
    Case("csv-unterminated-quote", _csv_unterminated,
         message=r"c\.csv:7: malformed CSV: .*unterminated quote"),
    Case("csv-utf8-bom", _csv_bom, code=0, check=_ok_vocab({"the", "cat", "sat"})),
    Case("csv-bad-utf8-line-8", _csv_bad_utf8_line8, message=r"c\.csv:8: not valid UTF-8"),
    Case("csv-over-long-line", _csv_long_line,
         message=r"c\.csv:5: line longer than max_line_bytes"),
    Case("csv-over-long-quoted-field", _csv_long_quoted_field,
         message=r"c\.csv:5: a field longer than max_line_bytes"),
    Case("csv-no-header-private-first-row", _csv_no_header,
         message=r"c\.csv:1: field 'user': column missing from the header \(line 1 must name "
                 r"the columns\), and so is 'text'; set user_field and text_field to the "
                 r"header's names \(--corpus\.user_field NAME --corpus\.text_field NAME on "
                 r"the command line\)$"),
    Case("jsonl-fractional-user-id", lambda d: _jsonl_line(d, json.dumps({"user": 3.5,
                                                                            "text": SECRET})),
         message=r"c\.jsonl:61: field 'user': expected a non-empty string or integer user id, "
                 r"found a number that is not an integer"),
    Case("file-given-to-the-text-folder-reader",
         lambda d: run(recipe(d, users_jsonl(d), reader="text_folder",
                              reader_args=""), "-o", "{out}"),
         message=r"c\.jsonl: expected a folder, found a file\. For a corpus file, use the reader "
                 r"of its format: --corpus\.@readers dp_vocab\.jsonl\.v1"),
    Case("unregistered-reader-near-a-registered-one",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--corpus.@readers",
                       "dp_vocab.csv.v2"),
         message=r"@readers = 'dp_vocab\.csv\.v2' is not registered\. Did you mean "
                 r"'dp_vocab\.csv\.v1'\?"),
    Case("string-key-given-as-a-bare-flag",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--corpus.text_field"),
         message=r"corpus\.text_field: expected a string in quotes, e\.g\. \"text\", got true "
                 r"\(on the command line, --corpus\.text_field with no value after it means "
                 r"true: give the value"),
    Case("jsonl-user-object", lambda d: _jsonl_line(d, json.dumps({"user": {"name": SECRET},
                                                                       "text": "x"})),
         message=r"c\.jsonl:61: field 'user': .*found a JSON object"),
    Case("jsonl-text-list", lambda d: _jsonl_line(d, json.dumps({"user": "u", "text": [SECRET]})),
         message=r"c\.jsonl:61: field 'text': expected a string, found a JSON list"),
    Case("jsonl-not-json", lambda d: _jsonl_line(d, SECRET + " {"),
         message=r"c\.jsonl:61: not valid JSON"),
    Case("jsonl-bad-utf8", lambda d: _bad_utf8_jsonl(d),
         message=r"c\.jsonl:61: not valid UTF-8"),
    Case("jsonl-deep-nesting", lambda d: _jsonl_line(d, "[" * 100_000 + "]" * 100_000),
         message=r"c\.jsonl:61: JSON nested too deeply"),
    Case("gz-bit-flip", _gz_bitflip, message=r"c\.jsonl\.gz: the compressed stream is corrupt"),
    Case("gz-truncated", _gz_truncated,
         message=r"c\.jsonl\.gz: the compressed stream is corrupt"),
    # a run that reads no document stops, whatever the reader, and writes nothing
    Case("empty-corpus", _empty_corpus,
         message=r"c\.jsonl: no document was read: found no line holding a document\. The file "
                 r"is empty \(0 bytes\), as a write that stopped leaves it\. Point the recipe at "
                 r"your data with --paths\.corpus"),
    Case("newlines-only-corpus", lambda d: _empty_corpus(d, "\n\n\n"),
         message=r"c\.jsonl: no document was read: found no line holding a document\. Point "
                 r"the recipe at your data with --paths\.corpus"),
    Case("every-line-skipped", _every_line_skipped,
         message=r"c\.jsonl: no document was read: all 60 lines were skipped \(the first: "
                 r"\S*c\.jsonl:1: field 'body': missing .*\)\. Check that user_field and "
                 r"text_field name the fields .*; on_error = \"skip\" skips bad lines"),
    Case("blank-documents-only", _blank_documents,
         message=r"c\.jsonl: no document was read: all 60 lines were skipped \(the first: "
                 r"\S*c\.jsonl:1: field 'text': empty document, skipped\)\. Check that "
                 r"text_field names the field holding the texts$"),
    # the reason names its own fix: no hint about fields beside it
    Case("csv-short-rows-skipped",
         lambda d: run(recipe(d, users_csv(d, [f"{SECRET} {i}" for i in range(5)]),
                              reader="csv", reader_args='on_error = "skip"'), "-o", "{out}"),
         message=r"c\.csv: no document was read: all 5 lines were skipped \(the first: "
                 r"\S*c\.csv:2: expected 2 columns, found 1\)\. on_error = \"skip\" skips bad "
                 r"lines, it cannot make a corpus of them$"),
    Case("csv-header-only", lambda d: run(recipe(d, users_csv(d, []), reader="csv"), "-o",
                                          "{out}"),
         message=r"c\.csv: no document was read: found no line holding a document"),
    Case("csv-blank-documents-only",
         lambda d: run(recipe(d, users_csv(d, [f"{SECRET} {i}, " for i in range(5)]),
                              reader="csv"), "-o", "{out}"),
         message=r"c\.csv: no document was read: all 5 lines were skipped \(the first: "
                 r"\S*c\.csv:2: field 'text': empty document"),
    Case("few-users-empty-release", _few_users, code=0, check=_empty_release),
    Case("mixed-int-and-string-ids", _mixed_ids, code=0, check=_mixed_warning),
    Case("skip-mode-notice", _skip_mode, code=0, check=_skip_notice),
    Case("missing-corpus", lambda d: run(recipe(d, str(d / "nope.jsonl")), "-o", "{out}"),
         message=r"nope\.jsonl: corpus file not found"),
    Case("glob-matches-nothing", lambda d: run(recipe(d, str(d / "*.parquet")), "-o", "{out}"),
         message=r"\*\.parquet: no file matches"),
    Case("parquet-not-a-table", lambda d: run(recipe(d, users_jsonl(d, name="c.parquet"),
                                                     reader="parquet"), "-o", "{out}"),
         message=r"c\.parquet: .*not a readable Parquet file"),
    Case("parquet-missing-column", lambda d: run(recipe(d, _parquet(d, {"author": ["a"],
                                                                        "text": ["x y"]}),
                                                        reader="parquet"), "-o", "{out}"),
         message=r"c\.parquet: field 'user': column missing"),
    Case("arrow-text-not-strings", lambda d: run(recipe(d, _arrow(d, {"user": ["a"],
                                                                      "text": [1.5]}),
                                                        reader="arrow"), "-o", "{out}"),
         message=r"c\.arrow: field 'text': expected a column of strings"),
    Case("text-folder-absolute-pattern", lambda d: _text_folder(d, pattern="/etc/*"),
         message=r"pattern: expected a glob relative to the corpus folder"),
    Case("text-folder-parent-pattern", lambda d: _text_folder(d, pattern="../*"),
         message=r"pattern: expected a glob relative"),
    Case("text-folder-over-long-file",
         lambda d: _text_folder(d, files={"a.txt": b"x " * 3000, "b.txt": b"ok"},
                                reader_args="max_file_bytes = 1000"),
         message=r"a\.txt: file longer than max_file_bytes"),
    Case("text-folder-bad-utf8",
         lambda d: _text_folder(d, files={"a.txt": b"line one\nline two \xff\n"}),
         message=r"a\.txt:2: not valid UTF-8 .*Fix the file, or set corpus\.on_error = "
                 r"\"skip\" .* to skip such files"),
    Case("text-file-given-to-the-jsonl-reader",
         lambda d: (d.joinpath("notes.txt").write_text(SECRET + "\n", encoding="utf-8"),
                    run(recipe(d, str(d / "notes.txt")), "-o", "{out}"))[1],
         message=r"notes\.txt:1: not valid JSON \(.*\); the file's name says plain text: for a "
                 r"folder of text files, one user per file, use the text-folder reader "
                 r"\(--corpus\.@readers dp_vocab\.text_folder\.v1\)"),
    Case("folder-given-to-the-jsonl-reader", lambda d: run(recipe(d, str(d)), "-o", "{out}"),
         message=r": expected a corpus file, found a folder\. For a folder of text files \(one "
                 r"user per file\), use the text-folder reader: --corpus\.@readers "
                 r"dp_vocab\.text_folder\.v1"),
    Case("text-folder-missing", lambda d: run(recipe(d, str(d / "nodir"), reader="text_folder"),
                                              "-o", "{out}"),
         message=r"nodir: corpus folder not found"),
    Case("text-folder-empty-files-only",
         lambda d: _text_folder(d, files={"a.txt": b"", "b.txt": b" \n\n"}),
         message=r"docs: no document was read: all 2 files were skipped \(the first: "
                 r"\S*a\.txt: empty document, skipped\)\. Check that the files matching "
                 r"pattern '\*\.txt' hold the documents"),
    # ---- recipes
    Case("misspelt-section-budjet", _misspelt_section,
         message=r"unknown section \[budjet\]; allowed sections: \[paths\].*\[budget\]"),
    Case("unknown-budget-key", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                             "--budget.epsilonn", "3"),
         message=r"override --budget\.epsilonn: \[budget\] has no key 'epsilonn' \(did you "
                 r"mean --budget\.epsilon\?\); allowed: epsilon, delta"),
    Case("unknown-run-key", lambda d: run(recipe(d, users_jsonl(d), extra="[run]\nsead = 3"),
                                          "-o", "{out}"),
         message=r"\[run\]: unknown key 'sead'"),
    Case("override-of-unknown-key", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                  "--run.sead", "3"),
         message=r"override --run\.sead: \[run\] has no key 'sead' \(did you mean "
                 r"--run\.seed\?\); allowed: seed"),
    # a misspelt [paths] variable would otherwise run on the recipe's own corpus
    Case("override-of-unknown-paths-key",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--paths.corpuss", "x.jsonl"),
         message=r"override --paths\.corpuss: \[paths\] has no key 'corpuss' \(did you mean "
                 r"--paths\.corpus\?\); its keys: corpus\. A new \[paths\] variable is read "
                 r"only where the recipe file refers to it"),
    Case("override-of-absent-optional-section",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--counts.epsilon", "1"),
         message=r"override --counts\.epsilon: \[counts\] is a section of dp-vocab recipes, "
                 r"but not in this recipe.*Add the section to the recipe"),
    Case("unknown-corpus-key", lambda d: run(recipe(d, users_jsonl(d), reader_args="pathh = 1"),
                                             "-o", "{out}"),
         message=r"corpus\.pathh"),
    Case("unknown-items-key", lambda d: run(recipe(d, users_jsonl(d), items_args="nmax = 2"),
                                            "-o", "{out}"),
         message=r"items\.nmax.*dp_vocab\.items\.v1 takes: tokenizer, n_min, n_max"),
    Case("unknown-tokenizer-key",
         lambda d: run(recipe(d, users_jsonl(d), tokenizer_args='patern = "x"'), "-o", "{out}"),
         message=r"items\.tokenizer\.patern"),
    Case("unknown-mechanism-key", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                "--mechanism.epsilonn", "1"),
         message=r"mechanism\.epsilonn.*weighted_gaussian\.v1 takes: epsilon, delta, "
                 r"max_items_per_user"),
    Case("override-of-absent-section", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                     "--budjet.epsilon", "1"),
         message=r"override --budjet\.epsilon: \[budjet\] is not a recipe section; this "
                 r"recipe's sections: \[paths\], \[budget\]"),
    Case("unknown-export-key", lambda d: _exporters(
        d, '[export]\n@exporters = "dp_vocab.plain.v1"\njsonll = true'),
         message=r"export\.jsonll"),
    Case("unknown-counts-key", lambda d: _exporters(
        d, '[counts]\n@counts = "dp_vocab.discrete_laplace_counts.v1"\nepsilon = 1\nepsilonn = 1'),
         message=r"counts\.epsilonn"),
    Case("section-without-function", lambda d: _exporters(d, "[counts]\nepsilon = 1"),
         message=r"\[counts\]: missing @counts"),
    Case("recipe-syntax-error", lambda d: _bad_recipe_bytes(d, b"[paths]\nx = 1\n[corpus\n"),
         message=r"bad\.cfg:3: cannot parse"),
    Case("recipe-binary", lambda d: _bad_recipe_bytes(d, bytes(range(256)) * 8),
         message=r"bad\.cfg:\d+: not a UTF-8 text file"),
    Case("recipe-nul-byte", lambda d: _bad_recipe_bytes(d, b"[paths]\nx = \"a\x00\"\n"),
         message=r"bad\.cfg:2: contains a NUL byte"),
    Case("recipe-duplicate-key", lambda d: _bad_recipe_bytes(d, b"[paths]\nx = 1\nx = 2\n"),
         message=r"bad\.cfg:3: cannot parse: option 'x'"),
    Case("recipe-not-found", lambda d: run(str(d / "nope.cfg"), "-o", "{out}"),
         message=r"nope\.cfg: file not found"),
    Case("lone-surrogate-in-corpus-path",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--paths.corpus",
                       str(d / "c\udcff.jsonl")),
         message=r"paths\.corpus: contains bytes that are not valid UTF-8"),
    Case("override-without-section", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                   "--epsilon", "1"),
         message=r"override '--epsilon': expected --section\.key VALUE"),
    Case("override-key-with-newline", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                    "--mechanism.epsilon\n[budget]", "1"),
         message=r"override '--mechanism\.epsilon\\n\[budget\]': expected --section\.key "
                 r"VALUE, the section and key made of letters"),
    Case("override-key-without-key", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                   "--mechanism.", "1"),
         message=r"override '--mechanism\.': expected --section\.key VALUE"),
    Case("override-of-a-whole-section",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--items.tokenizer", "1"),
         message=r"override --items\.tokenizer: \[items\.tokenizer\] is a section of the "
                 r"recipe, not a value; set one of its keys, e\.g\. --items\.tokenizer\."),
    Case("override-under-a-value",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--budget.epsilon.x", "1"),
         message=r"override --budget\.epsilon\.x: budget\.epsilon is a value, not a section; "
                 r"set it with --budget\.epsilon VALUE"),
    Case("unknown-tokenizer-key-override",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--items.tokenizer.patern", "x"),
         message=r"items\.tokenizer\.patern: unexpected argument: 'patern'; "
                 r"dp_vocab\.regex\.v1 takes: "),
    # a bad value of a function nested in a section is named by its full field
    Case("bad-value-of-a-nested-function",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--items.tokenizer.pattern",
                       "("),
         message=r"^error: items\.tokenizer\.pattern: expected a valid regular expression"),
    Case("missing-pipeline-tokenizer-file",
         lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}", "--items.tokenizer.@tokenizers",
                       "dp_vocab.hf_tokenizer_pipeline.v1", "--items.tokenizer.path", "no.json"),
         message=r"^error: items\.tokenizer\.path: expected an existing tokenizer\.json or a "
                 r"folder holding one \(a relative path: read from the current directory, "),
    Case("override-before-the-recipe",
         lambda d: ["run", "--budget.epsilon", "1", recipe(d, users_jsonl(d)), "-o", "{out}"],
         message=r"RECIPE: expected it first, found the override '--budget\.epsilon'; give it "
                 r"before the overrides: dp-vocab run RECIPE --output DIR --budget\.epsilon "
                 r"VALUE"),
    Case("override-before-the-corpus-of-evaluate",
         lambda d: ["evaluate", "--corpus.user_field", "user", users_jsonl(d), "-o", "{out}"],
         message=r"CORPUS-OR-RECIPE: expected it first, found the override "
                 r"'--corpus\.user_field'; give it before the overrides: dp-vocab evaluate "
                 r"CORPUS-OR-RECIPE --corpus\.user_field VALUE"),
    Case("recipe-without-the-budget-in-mechanism", _mechanism_without_budget,
         message=r"mechanism\.epsilon: missing required argument: 'epsilon'; mechanism\.delta: "
                 r"missing required argument: 'delta'; take the budget from \[budget\]: "
                 r"epsilon = \$\{budget\.epsilon\} and delta = \$\{budget\.delta\} in "
                 r"\[mechanism\]"),
    Case("over-budget", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                      "--mechanism.epsilon", "8"),
         message=r"budget"),
    Case("bad-epsilon", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                      "--mechanism.epsilon", "-1", "--budget.epsilon", "9"),
         message=r"mechanism\.epsilon: expected"),
    Case("unregistered-mechanism", lambda d: run(recipe(d, users_jsonl(d)), "-o", "{out}",
                                                 "--mechanism.@mechanisms", "dp_vocab.nope.v1"),
         message=r"\[mechanism\]"),
    # ---- outputs
    Case("force-on-unrelated-directory", _force_unrelated,
         message=r"mine: the directory exists and is not a dp-vocab output",
         check=lambda out, err: None),
    Case("force-on-output-with-added-file", _force_previous_output_with_extra_file,
         message=r"prev: the previous dp-vocab output now also holds 'notes\.txt'"),
    Case("force-on-current-directory", _force_cwd, cwd="here",
         message=r"--output \.: this is the current directory"),
    Case("force-on-ancestor-of-cwd", _force_ancestor_of_cwd, cwd="here/sub",
         message=r"--output \.\.: this is the current directory or one of its parents"),
    Case("output-contains-corpus", _output_contains_corpus,
         message=r"data: it contains an input of this run"),
    Case("output-is-a-file", _output_is_file, message=r"f: expected a directory path"),
    Case("output-exists-without-force", _output_exists,
         message=r"prev: the directory exists\. Pass --force"),
    Case("output-under-proc", lambda d: run(recipe(d, users_jsonl(d)), "-o", "/proc/dpv/out"),
         message=r"/proc/dpv/out: cannot write there"),
    Case("output-with-rich-markup", lambda d: ["run", recipe(d, users_jsonl(d)), "-o",
                                               "{parent}/a[/]b[bold]"],
         code=0),
    Case("output-lone-surrogate", lambda d: run(recipe(d, users_jsonl(d)), "-o",
                                                "{parent}/o\udcff"),
         message=r"the path is not valid UTF-8"),
    # ---- evaluate
    Case("evaluate-epsilon-abc", lambda d: _evaluate(d, "--epsilon", "abc"),
         message=r"--epsilon: expected comma-separated float values"),
    Case("evaluate-mechanisms-comma", lambda d: _evaluate(d, "--mechanisms", ","),
         message=r"--mechanisms: expected at least one comma-separated value"),
    Case("evaluate-unknown-mechanism", lambda d: _evaluate(d, "--mechanisms", "nope"),
         message=r"mechanism: expected one of"),
    Case("evaluate-negative-epsilon", lambda d: _evaluate(d, "--epsilon", "-1"),
         message=r"epsilon: expected a real number from 1e-06 to 100"),
    Case("evaluate-repeats-0", lambda d: _evaluate(d, "--repeats", "0"),
         message=r"repeats: expected an integer >= 1"),
    Case("evaluate-max-items-x", lambda d: _evaluate(d, "--max-items-per-user", "x"),
         message=r"--max-items-per-user: expected comma-separated int values"),
    Case("evaluate-empty-corpus", lambda d: _evaluate(d, corpus=False),
         message=r"c\.jsonl: no document was read: found no line holding a document"),
    # ---- audit
    Case("audit-runs-0", _audit("--runs", "0"), message=r"runs: expected an integer from 1"),
    Case("audit-canary-items-0", _audit("--canary-items", "0"),
         message=r"canary_items: expected an integer from 1"),
    Case("audit-canary-items-1e8", _audit("--canary-items", "100000000"),
         message=r"canary_items: expected an integer from 1 to 1,000,000"),
    Case("audit-confidence-1.5", _audit("--confidence", "1.5"),
         message=r"confidence: expected a number strictly between 0 and 1"),
    Case("audit-output-is-directory", lambda d: _audit("-o", str(d))(d),
         message=r"is a directory; give a file name"),
    Case("audit-epsilon-as-param", _audit("-p", "epsilon=2"),
         message=r"--param 'epsilon=2': set epsilon with --epsilon"),
    # ---- items and exporter parameters
    Case("released-item-with-newline", lambda d: _released_item_with(d, "a\u2028b c"),
         code=None, check=lambda out, err: _lines_match_items(out)),
    Case("released-item-with-lone-surrogate", lambda d: _released_item_with(d, "a\ud800b c"),
         code=None, check=lambda out, err: _lines_match_items(out)),
    Case("spacy-lang-zz", lambda d: _exporters(d, '[export]\n@exporters = "dp_vocab.spacy.v1"'
                                                  '\nlang = "zz"'),
         message=r"export\.lang"),
    Case("bpe-vocab-size-negative", lambda d: _exporters(
        d, '[counts]\n@counts = "dp_vocab.discrete_laplace_counts.v1"\nepsilon = 1\n'
           '[export]\n@exporters = "dp_vocab.hf_tokenizer.v1"\nmodel = "bpe"\nvocab_size = -5')
         + ["--budget.epsilon", "4", "--mechanism.epsilon", "3"],
         message=r"vocab_size"),
    Case("characters-private-bpe", _tokenizer_recipe_on_characters("private-bpe"), code=0,
         check=_moved_tokenizer_reads_characters(exact=True)),
    Case("characters-private-wordpiece", _tokenizer_recipe_on_characters("private-wordpiece"),
         code=0, check=_moved_tokenizer_reads_characters(exact=False)),
    Case("characters-private-unigram", _tokenizer_recipe_on_characters("private-unigram"),
         code=0, check=_moved_tokenizer_reads_characters(exact=False)),
]


def _bad_utf8_jsonl(d):
    users_jsonl(d)
    with open(d / "c.jsonl", "ab") as f:
        f.write(b'{"user": "u", "text": "caf\xe9"}\n')
    return run(recipe(d, str(d / "c.jsonl")), "-o", "{out}")


def _lines_match_items(out: Path):
    """One item per line for any line reader (str.splitlines also splits at U+2028, U+0085)."""
    items = [json.loads(line)["item"] for line in
             (out / "vocab.jsonl").read_bytes().decode("utf-8").split("\n") if line]
    assert len((out / "vocab.txt").read_text(encoding="utf-8").splitlines()) == len(items)
    assert len((out / "vocab.jsonl").read_text(encoding="utf-8").splitlines()) == len(items)


# ---- the campaign over newer surfaces: Parquet and Arrow files, public lists given as files,
# evaluate --holdout on tiny and degenerate corpora

USERS = [f"u{i}" for i in range(60)]
TEXTS = [f"the cat sat on the mat {i}" for i in range(60)]


def _table_file(d: Path, kind: str, columns: dict, name: str = "c", stream: bool = False):
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.table(columns) if not isinstance(columns, pa.Table) else columns
    path = d / f"{name}.{kind if not stream else 'arrows'}"
    if kind == "parquet":
        pq.write_table(table, path)
    else:
        opener = pa.ipc.new_stream if stream else pa.ipc.new_file
        with pa.OSFile(str(path), "wb") as f, opener(f, table.schema) as w:
            w.write_table(table)
    return path


def _table_run(kind: str, columns, cut: int | None = None, stream: bool = False):
    """A run over a Parquet or Arrow file of ``columns`` (cut to its first ``cut`` bytes)."""
    def make(d):
        path = _table_file(d, kind, columns() if callable(columns) else columns, stream=stream)
        if cut is not None:
            path.write_bytes(path.read_bytes()[:cut])
        return run(recipe(d, str(path), reader="arrow" if kind == "arrow" else "parquet"),
                   "-o", "{out}")
    return make


def _dictionary_columns():
    import pyarrow as pa
    return {"user": pa.array(USERS).dictionary_encode(),
            "text": pa.array(TEXTS).dictionary_encode()}


def _categorical_int_ids():
    import pyarrow as pa
    return {"user": pa.array(list(range(60))).dictionary_encode(), "text": TEXTS}


def _duplicate_columns():
    import pyarrow as pa
    return pa.Table.from_arrays([pa.array(USERS), pa.array(TEXTS), pa.array([SECRET] * 60)],
                                names=["user", "text", "text"])


def _second_file_without_user(d):
    _table_file(d, "parquet", {"user": USERS, "text": TEXTS}, name="c1")
    _table_file(d, "parquet", {"author": [SECRET], "text": ["x"]}, name="c2")
    return run(recipe(d, str(d / "c*.parquet"), reader="parquet"), "-o", "{out}")


def _public_list(content: bytes, name: str = "pub.txt", *extra: str):
    """A policy_gaussian_public run whose public list is the file ``content``."""
    def make(d):
        (d / name).write_bytes(content)
        return run(recipe(d, users_jsonl(d)), "-o", "{out}", "--mechanism.@mechanisms",
                   "dp_vocab.policy_gaussian_public.v1", "--mechanism.public_items",
                   str(d / name), *extra)
    return make


def _gz_cut(data: bytes) -> bytes:
    packed = gzip.compress(data)
    return packed[:len(packed) // 2]


def _one_item_per_line(out: Path, err: str):
    _lines_match_items(out)
    items = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(items) == len(set(items)) and {"the", "cat"} <= set(items)
    assert all(w.splitlines() == [w] for w in items)


def _holdout_corpus(d, held_text: str, n: int = 60):
    """``n`` users; those the public split holds out at 0.5 write ``held_text``."""
    import hashlib

    from dp_vocab.bounding.user_order import encode_user_id
    from dp_vocab.research.heldout import SPLIT_LABEL

    def held(u):
        return int.from_bytes(hashlib.sha256(SPLIT_LABEL + encode_user_id(u)).digest()[:8],
                              "big") < (1 << 63)
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            u = f"u{i}"
            f.write(json.dumps({"user": u, "text": held_text if held(u) else "the cat sat"})
                    + "\n")
    return ["evaluate", str(d / "c.jsonl"), "-o", "{out}", "--repeats", "1", "--mechanisms",
            "weighted_gaussian", "--holdout", "0.5"]


def _one_user_holdout(d):
    (d / "c.jsonl").write_text(json.dumps({"user": SECRET, "text": "the cat"}) + "\n")
    return ["evaluate", str(d / "c.jsonl"), "-o", "{out}", "--repeats", "1", "--mechanisms",
            "weighted_gaussian", "--holdout", "0.2"]


def _holdout_results_are_numbers(out: Path, err: str):
    record = json.loads((out / "results.json").read_text(encoding="utf-8"),
                        parse_constant=lambda c: pytest.fail(f"results.json holds {c}"))
    assert record["summary"][0]["heldout_coverage_mean"] >= 0


_LONG = "x" * 80   # longer than the extractor's max_length: dropped
CASES += [
    Case("parquet-truncated", _table_run("parquet", {"user": USERS, "text": TEXTS}, cut=300),
         message=r"c\.parquet: not a readable Parquet file"),
    Case("arrow-file-truncated", _table_run("arrow", {"user": USERS, "text": TEXTS}, cut=600),
         message=r"c\.arrow: not a readable Arrow IPC file or stream"),
    Case("arrow-stream-truncated", _table_run("arrow", {"user": USERS, "text": TEXTS}, cut=600,
                                              stream=True),
         message=r"c\.arrows: not a readable Arrow IPC file or stream"),   # not "compressed"
    Case("parquet-nested-user-struct",
         _table_run("parquet", {"user": [{"name": SECRET}] * 60, "text": TEXTS}),
         message=r"c\.parquet: field 'user': expected a column of strings or integers "
                 r"\(user ids\), found a column of type struct"),
    Case("arrow-nested-text-list", _table_run("arrow", {"user": USERS, "text": [[SECRET]] * 60}),
         message=r"c\.arrow: field 'text': expected a column of strings, found a column of "
                 r"type list"),
    Case("parquet-dictionary-encoded", _table_run("parquet", _dictionary_columns), code=0,
         check=_ok_vocab({"the", "cat", "sat"})),
    Case("arrow-dictionary-encoded", _table_run("arrow", _dictionary_columns), code=0,
         check=_ok_vocab({"the", "cat", "sat"})),
    Case("arrow-categorical-integer-ids", _table_run("arrow", _categorical_int_ids), code=0,
         check=_ok_vocab({"the", "cat", "sat"})),
    Case("parquet-null-user-row-31",
         _table_run("parquet", {"user": USERS[:30] + [None] + USERS[31:], "text": TEXTS}),
         message=r"c\.parquet:31: field 'user': expected a non-empty string or integer user "
                 r"id, found null\. Fix the row"),
    Case("arrow-null-text-row-31",
         _table_run("arrow", {"user": USERS, "text": TEXTS[:30] + [None] + TEXTS[31:]}),
         message=r"c\.arrow:31: field 'text': expected a string, found null"),
    Case("parquet-float-user-ids", _table_run("parquet", {"user": [float(i) for i in range(60)],
                                                          "text": TEXTS}),
         message=r"field 'user': .*found a column of type double; integer ids with a missing "
                 r"value become floats"),
    Case("parquet-duplicate-column", _table_run("parquet", _duplicate_columns),
         message=r"c\.parquet: field 'text': expected one column of this name, found 2; "
                 r"rename or drop the others"),
    Case("arrow-duplicate-column", _table_run("arrow", _duplicate_columns),
         message=r"c\.arrow: field 'text': expected one column of this name, found 2"),
    Case("parquet-zero-rows", _table_run("parquet", lambda: {
        "user": __import__("pyarrow").array([], "string"),
        "text": __import__("pyarrow").array([], "string")}),
         message=r"c\.parquet: no document was read: found no row holding a document"),
    Case("arrow-blank-texts-only", _table_run("arrow", {"user": USERS, "text": ["  "] * 60}),
         message=r"c\.arrow: no document was read: all 60 rows were skipped \(the first: "
                 r"\S*c\.arrow:1: field 'text': empty document, skipped\)"),
    Case("parquet-second-file-without-user-column", _second_file_without_user,
         message=r"c2\.parquet: field 'user': column missing"),
    # public lists given as files
    Case("public-list-empty", _public_list(b""),
         message=r"pub\.txt: the public item list holds no item; expected one item per line"),
    Case("public-list-blank-lines", _public_list(b"\n\r\n \n"),
         message=r"pub\.txt: the public item list holds no item"),
    Case("public-list-duplicates-and-line-breaks",
         _public_list("\ufeffthe\nthe\ncat\rsat\nmat\u2028on\x85x\nthe\tcat\n".encode()),
         code=0, check=_one_item_per_line),
    Case("public-list-not-utf8", _public_list(b"the\ncat\ncaf\xe9\nsat\n"),
         message=r"pub\.txt:3: not valid UTF-8 \(invalid continuation byte at byte 4 of the "
                 r"line\)"),
    Case("public-list-utf16", _public_list("the\ncat\n".encode("utf-16")),
         message=r"pub\.txt:1: not valid UTF-8"),
    Case("public-list-over-long-line", _public_list(b"the\n" + b"x" * (1 << 20) + b"\n"),
         message=r"pub\.txt:2: line longer than 1,048,576 bytes"),
    Case("public-list-gz-truncated",
         _public_list(_gz_cut("".join(f"w{i}\n" for i in range(20_000)).encode()),
                      "pub.txt.gz"),
         message=r"pub\.txt\.gz: cannot be read after line \d+ \(EOFError: a damaged "
                 r"compressed file"),
    # read only as far as the list's size (the last band's limit): a damaged tail past it,
    # as in a file of gigabytes, is never read
    Case("public-list-read-only-to-its-limit",
         _public_list(b"the\ncat\nsat\n" + b"\xff" * 1000 + b"\n",
                      "pub.txt", "--mechanism.public_bands", "[[3, 1]]"),
         code=0, check=_ok_vocab({"the", "cat", "sat"})),
    # evaluate --holdout on tiny and degenerate corpora
    Case("evaluate-holdout-one-user", _one_user_holdout,
         message=r"holdout: expected a share that leaves users holding items on both sides"),
    Case("evaluate-holdout-held-out-users-without-items", lambda d: _holdout_corpus(
        d, f"{_LONG} {_LONG}"), message=r"holdout: expected a share that leaves users "
                                        r"holding items on both sides"),
    Case("evaluate-holdout-held-out-users-share-nothing",
         lambda d: _holdout_corpus(d, "zzz qqq"), code=0, check=_holdout_results_are_numbers),
    Case("evaluate-holdout-1", lambda d: _evaluate(d, "--holdout", "1"),
         message=r"holdout: expected a share of users in \[0, 1\)"),
    Case("evaluate-holdout-nan", lambda d: _evaluate(d, "--holdout", "nan"),
         message=r"holdout: expected a share of users in \[0, 1\)"),
]


def _files(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def assert_one_error_line(stderr: str, message: str) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    assert re.search(message, errors[0]), errors[0]
    assert "Traceback" not in stderr


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_hostile_input_table(case: Case, tmp_path, monkeypatch):
    inputs = tmp_path / "in"
    parent = tmp_path / "out"
    inputs.mkdir()
    parent.mkdir()
    out = parent / "o"
    argv = [a.replace("{out}", str(out)).replace("{parent}", str(parent))
            for a in case.make(inputs)]
    before = _files(inputs)
    if case.cwd:
        monkeypatch.chdir(inputs / case.cwd)
    res = runner.invoke(app, argv)
    err = res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), \
        f"uncaught {type(res.exception).__name__}: {res.exception}"
    assert "Traceback" not in res.output
    assert SECRET not in res.output
    if case.code == 0 or (case.code is None and res.exit_code == 0):
        assert res.exit_code == 0, res.output
        outs = list(parent.iterdir())
        assert len(outs) == 1 and outs[0].is_dir(), outs   # the output, nothing else
        if case.check:
            case.check(outs[0], err)
    else:
        assert res.exit_code == (case.code or 2), res.output
        assert_one_error_line(err, case.message or "")
        assert list(parent.iterdir()) == []
        if case.check and case.code is not None:
            case.check(out, err)
    assert _files(inputs) == before, "the run changed or left files next to its inputs"


def test_force_never_deletes_what_it_did_not_write(tmp_path):
    (tmp_path / "in").mkdir()
    argv = _force_unrelated(tmp_path / "in")
    res = runner.invoke(app, argv)
    assert res.exit_code == 2
    assert (tmp_path / "in" / "mine" / "thesis.tex").read_text() == "years of work"


def test_unexpected_error_is_one_line_without_its_message_and_debug_shows_it(tmp_path,
                                                                            monkeypatch):
    import dp_vocab.recipes as recipes

    def explode(*a, **k):
        raise ValueError(f"a message quoting {SECRET}")

    monkeypatch.setattr(recipes, "run_recipe", explode)
    res = runner.invoke(app, run(recipe(tmp_path, users_jsonl(tmp_path)), "-o",
                                 str(tmp_path / "o")))
    assert res.exit_code == 1
    assert_one_error_line(res.stderr, r"unexpected internal error \(ValueError\).*--debug")
    assert SECRET not in res.output
    res = runner.invoke(app, ["--debug", *run(recipe(tmp_path, users_jsonl(tmp_path)), "-o",
                                               str(tmp_path / "o"))])
    assert isinstance(res.exception, ValueError) and SECRET in str(res.exception)


def test_typer_pretty_exceptions_are_off():
    # typer's pretty tracebacks print local variables: private strings would reach the console
    assert app.pretty_exceptions_enable is False


def test_concurrent_force_writers_all_finish_and_leave_nothing(tmp_path):
    from dp_vocab.export.output_dir import MARKER, atomic_output_dir
    target = tmp_path / "o"
    failures = []

    def writer(k):
        for i in range(15):
            try:
                with atomic_output_dir(target, force=True) as tmp:
                    (tmp / "vocab.txt").write_text(f"{k} {i}\n")
                    (tmp / "sub").mkdir()
                    (tmp / "sub" / "x").write_text("x")
            except Exception as e:  # noqa: BLE001 - collected and asserted below
                failures.append(repr(e))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert [p.name for p in tmp_path.iterdir()] == ["o"]            # no .tmp-* / .old-*
    assert sorted(p.name for p in target.iterdir()) == [MARKER, "sub", "vocab.txt"]


def test_concurrent_writers_without_force_one_wins_the_others_fail_cleanly(tmp_path):
    from dp_vocab.errors import OutputError
    from dp_vocab.export.output_dir import atomic_output_dir
    target = tmp_path / "o"
    results = []
    barrier = threading.Barrier(8)

    def writer(k):
        try:
            with atomic_output_dir(target, force=False) as tmp:
                (tmp / "vocab.txt").write_text(f"{k}\n")
                barrier.wait()
            results.append("ok")
        except OutputError:
            results.append("error")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["error"] * 7 + ["ok"]
    assert [p.name for p in tmp_path.iterdir()] == ["o"]


# ---- memory rows: a subprocess under an address-space limit, peak RSS against a normal run --
# A normal small run needs about 0.6 GB of address space (numba/llvm); 2 GB catches the
# multi-GB classes (Δ0 = 1e9: ~24 GB; one user's n-grams: 4.9 GB) with margin. The scaled-down
# inputs below would add hundreds of MB to the peak RSS if the caps did not bound memory while
# streaming; the bound allows 120 MB over a normal run.
AS_LIMIT = 2 * 2 ** 30
RSS_MARGIN_KB = 120 * 1024


def _limited(argv: list[str], cwd: Path) -> tuple[int, str, int]:
    """(exit code, stderr, peak RSS in KB) of the CLI run under the address-space limit."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))

    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "NUMBA_NUM_THREADS": "2",
           "OMP_NUM_THREADS": "2"}
    proc = subprocess.Popen([str(EXE), *argv], cwd=cwd, preexec_fn=limit, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err, usage.ru_maxrss


@pytest.fixture(scope="module")
def normal_rss(tmp_path_factory):
    d = tmp_path_factory.mktemp("normal")
    code, err, rss = _limited(run(recipe(d, users_jsonl(d)), "-o", str(d / "o")), d)
    assert code == 0, err
    return rss


def _one_user_many_ngrams(d: Path) -> list[str]:
    import random
    rng = random.Random(1)
    with open(d / "c.jsonl", "w", encoding="utf-8") as f:
        for _ in range(200):
            words = " ".join(f"w{rng.randrange(200_000)}" for _ in range(2000))
            f.write(json.dumps({"user": "bot", "text": words}) + "\n")
        for i in range(60):
            f.write(json.dumps({"user": f"u{i}", "text": "the cat sat"}) + "\n")
    return run(recipe(d, str(d / "c.jsonl"), items_args="n_max = 5\nmax_distinct_per_user = 1000"),
               "-o", str(d / "out" / "o"))


def _huge_csv_field(d: Path) -> list[str]:
    with open(d / "c.csv", "wb") as f:
        f.write(b"user,text\nu1,hello\nu2," + b"x " * (40 * 2 ** 20) + b"\n")
    return run(recipe(d, str(d / "c.csv"), reader="csv"), "-o", str(d / "out" / "o"))


def _huge_text_file(d: Path) -> list[str]:
    (d / "docs").mkdir()
    (d / "docs" / "big.txt").write_bytes(b"y " * (40 * 2 ** 20))
    return run(recipe(d, str(d / "docs"), reader="text_folder",
                      reader_args="max_file_bytes = 1000000"), "-o", str(d / "out" / "o"))


def _huge_max_items(d: Path) -> list[str]:
    return run(recipe(d, users_jsonl(d)), "-o", str(d / "out" / "o"),
               "--mechanism.max_items_per_user", "1000000000")


MEMORY = [
    pytest.param(_one_user_many_ngrams, 0, None, id="one-user-many-distinct-ngrams"),
    pytest.param(_huge_csv_field, 2, r"c\.csv:3: line longer than max_line_bytes",
                 id="80MB-csv-field"),
    pytest.param(_huge_text_file, 2, r"big\.txt: file longer than max_file_bytes",
                 id="80MB-text-file"),
    pytest.param(_huge_max_items, 2, r"max_items_per_user", id="max-items-per-user-1e9"),
]


@pytest.mark.parametrize("make,code,message", MEMORY)
def test_memory_bound(make, code, message, tmp_path, normal_rss):
    (tmp_path / "out").mkdir()
    argv = make(tmp_path)
    rc, err, rss = _limited(argv, tmp_path)
    assert rc == code, err
    assert "Traceback" not in err
    if message:
        assert_one_error_line(err, message)
        assert list((tmp_path / "out").iterdir()) == []
    assert rss <= normal_rss + RSS_MARGIN_KB, f"peak RSS {rss} KB vs a normal run {normal_rss} KB"


@pytest.mark.parametrize("argv,message", [
    (["audit", "gw", "--runs", "abc"], r"Invalid value for '--runs'.*dp-vocab audit --help"),
    (["run", "recipe.cfg"], r"Missing option '--output'"),
    (["nope"], r"No such command 'nope'"),
])
def test_option_parsing_errors_are_one_line_too(argv, message, monkeypatch, capsys):
    from dp_vocab.cli import main
    monkeypatch.setattr(sys, "argv", ["dp-vocab", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    assert_one_error_line(capsys.readouterr().err, message)
