"""``hf/README.md``: a Hugging Face model card for an exported tokenizer.

Built from the run's privacy record only (the release, the parameters and public inputs): the
same released set on neighbouring datasets gives the same card. It never states a count of
users, documents or items held: only what was released and how.
"""

from __future__ import annotations

import json
from pathlib import Path


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


MODEL_NAMES = {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram",
               "wordlevel": "WordLevel"}
STYLE_NAMES = {"gpt2": "GPT-2", "bert": "BERT", "sentencepiece": "SentencePiece", "t5": "T5"}


def _noise(stage: dict) -> str:
    """A stage's noise as its users name it: zCDP-accounted stages add discrete Gaussian noise."""
    if stage.get("noise") == "zcdp":
        return f"discrete Gaussian (ρ-zCDP, ρ = {stage['rho']:.4g})" if "rho" in stage \
            else "discrete Gaussian (zCDP)"
    return str(stage.get("noise", ""))


def _count(x) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else "?"


def _seeded(record: dict) -> list[str]:
    """A warning when the run's noise came from a seed: whoever knows the seed can take the
    noise off, so the card must not travel without saying so."""
    randomness = record.get("randomness") or {}
    if randomness.get("mode", "os") == "os":
        return []
    return [f"- **Not for release: a seeded run** (`run.seed = {randomness.get('seed', '?')}`). "
            "Its noise can be recomputed from the seed, so the guarantee above holds only for "
            "a run with the operating system's randomness (`run.seed = null`, the default)."]


def _public_inputs(record: dict) -> list[str]:
    """Public lists the run used, with what each was for and its SHA-256 (from the
    mechanism's record)."""
    out = []
    privacy = record.get("privacy") or {}
    for key, value in privacy.items():
        if isinstance(value, dict) and "sha256" in value:
            role = "the selection's public candidates" if key == "public_domain" else key
            out.append(f"- `{value.get('source', key)}` ({role}): {_count(value.get('items'))} "
                       f"items, SHA-256 `{value['sha256']}`")
    return out


def _items_text(items: dict) -> str:
    """The extractor's record (privacy.json's ``items``) as ``key = value``, the tokenizer
    first."""
    order = sorted(items, key=lambda k: (k != "tokenizer", k))
    # a file's name, not where it sat on the machine that ran (the card is for publishing)
    shown = {k: Path(v).name if k == "path" and isinstance(v, str) else v
             for k, v in items.items()}
    settings = ", ".join(f"`{k} = {json.dumps(shown[k], ensure_ascii=False)}`" for k in order)
    return f"the settings privacy.json records under `items`: {settings}" if settings else \
        "the recipe's extractor"


def model_card(record: dict, model: str, style: str, size: int, files: list[str],
               public: list[dict] | None = None) -> str:
    """The card's text (Markdown with YAML front matter). ``public``: the exporter's own public
    inputs (``source``, ``items``, ``sha256``)."""
    guarantee = record.get("guarantee") or {}
    eps, delta = guarantee.get("epsilon"), guarantee.get("delta")
    unit = guarantee.get("neighbouring", "add or remove one user")
    version = (record.get("library") or {}).get("version", "")
    stages = (record.get("composition") or {}).get("stages") or record.get("ledger") or []
    total = (record.get("composition") or {}).get("total") or {}
    items = record.get("items") or {}
    first, _, rest = style.partition(" ")
    title_style = f"{STYLE_NAMES.get(first, first)} {rest}".strip()
    lines = [
        "---",
        "library_name: tokenizers",
        "tags:",
        "- tokenizer",
        f"- {model}",
        "- differential-privacy",
        "- dp-vocab",
        "---",
        "",
        f"# A {MODEL_NAMES.get(model, model)} tokenizer ({title_style}) trained with "
        "differential privacy",
        "",
        f"Built by dp-vocab {version} from user text with **user-level "
        f"(ε = {_fmt(eps)}, δ = {_fmt(delta)})-differential privacy**: {unit}. "
        f"{size:,} tokens.",
        "",
        "## Guarantee",
        "",
        f"- Privacy unit: the user"
        + (f" ({(record.get('corpus') or {})['user']})" if (record.get("corpus") or {}).get("user")
           else "") + f"; neighbouring datasets: {unit}.",
        f"- Total: ε = {_fmt(total.get('epsilon', eps))}, δ = {_fmt(total.get('delta', delta))}"
        f" ({total.get('method', 'as declared')}).",
        f"- Released: {_count(record.get('released_items'))} items, selected by "
        f"`{record.get('mechanism', '?')}`"
        + (", with noisy counts" if record.get("noisy_counts") else "") + ".",
        *_seeded(record),
        "",
        "| stage | mechanism | ε | δ | noise |",
        "|---|---|---|---|---|",
    ]
    for s in stages:
        lines.append(f"| {s.get('name', '')} | `{s.get('mechanism', '')}` | "
                     f"{_fmt(s.get('epsilon'))} | {_fmt(s.get('delta'))} | {_noise(s)} |")
    inputs = _public_inputs(record) + [
        f"- `{p['source']}`: {_count(p['items'])} entries, SHA-256 `{p['sha256']}`"
        for p in (public or [])]
    lines += ["", "## Inputs", "",
              f"- Private: the corpus's text, split into items by {_items_text(items)}.",
              "- Public (no privacy cost): the tokenizer's pipeline (normaliser, pre-tokenizer, "
              "special tokens), the byte or character alphabet"
              + (", and:" if inputs else ".")]
    lines += ["  " + p for p in inputs]
    lines += [
        "", "## What is and is not protected", "",
        "- Protected: whether any one user's documents were used. Every token, merge and piece "
        "comes from items released by the mechanisms above, their DP counts, or public inputs "
        "(the alphabet, the public lists above): a word that few users share is in the "
        "vocabulary only if a public input holds it.",
        "- Not protected: what many users have in common (that is what a vocabulary is); a "
        "person whose text appears under several user ids (each id is one user); the public "
        "inputs; the run's parameters and this card, which are public by design.",
        "- The guarantee covers this tokenizer only: a model trained on the same text with it "
        "needs its own privacy accounting.",
        "", "## Usage", "",
        "```python",
        "from transformers import AutoTokenizer",
        "",
        'tokenizer = AutoTokenizer.from_pretrained("path/to/hf")',
        "```",
        "",
        "or, with `tokenizers` alone:",
        "",
        "```python",
        "from tokenizers import Tokenizer",
        "",
        'tokenizer = Tokenizer.from_file("path/to/hf/tokenizer.json")',
        "```",
        "", "## Files", "",
    ]
    lines += [f"- `{f.removeprefix('hf/')}`" for f in files]
    lines += ["", "The run's full privacy record (`privacy.json`) stays with the run's output; "
              "the guarantee and the stages above are taken from it.", ""]
    return "\n".join(lines)


__all__ = ["model_card"]
