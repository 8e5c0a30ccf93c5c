"""A tokenizer like an existing one: its normaliser, pre-tokenizer, post-processor, decoder,
special tokens and model type kept, its model retrained on DP counts (``export.like``).

The private counterpart of ``PreTrainedTokenizerFast.train_new_from_iterator``: the items were
extracted with the same tokenizer's pipeline (``text/pipeline.py``), so the released items are
its units. Post-processing of the release, the public tokenizer and public priors only.
"""

from __future__ import annotations

import json
import math
import string
from pathlib import Path

from ..ingest.text.pipeline import PipelineTokenizer, load_tokenizer, tokenizer_file
from .trained import BYTE_PIECES, train_model, with_byte_pieces

MODELS = {"BPE": "bpe", "WordPiece": "wordpiece", "Unigram": "unigram"}
# public text on which pipelines differ: case, an apostrophe, accents, an NFKC form (the
# ligature), digits and symbols, a script written without spaces
PROBE = "The College's café, naïve ﬁne Straße: x=42; 東京大学 and CAPS!"


class LikeSource:
    """The public tokenizer a private one is made like: loaded and checked before any data."""

    def __init__(self, path):
        from ..errors import ParameterError
        self.tokenizer = load_tokenizer(path, "export.like")   # checks the path's type first
        self.path = str(path)
        # text → the source's units: what its items were extracted as
        self.units_of = PipelineTokenizer(path)
        self.spec = json.loads(self.tokenizer.to_str())
        kind = self.spec["model"].get("type")
        if kind not in MODELS:
            raise ParameterError("export.like", self.path, "a tokenizer with a BPE, WordPiece or "
                                 f"Unigram model (found {kind})",
                                 "For a word-level vocabulary, export without like: "
                                 "model = \"wordlevel\"." if kind == "WordLevel" else None)
        self.model = MODELS[kind]
        self.special_tokens = [t["content"] for t in self.spec.get("added_tokens", [])
                               if t.get("special")]
        self.size = self.tokenizer.get_vocab_size()
        config = tokenizer_file(path).parent / "tokenizer_config.json"
        try:
            self.config = json.loads(config.read_text(encoding="utf-8")) \
                if Path(path).is_dir() and config.is_file() else {}
        except (OSError, ValueError):
            raise ParameterError("export.like", self.path, "a folder whose "
                                 "tokenizer_config.json is valid JSON") from None

    def check_items(self, extractor) -> None:
        """The model is trained on the items, so they must be this source's own units: from
        another pipeline (or lower-cased, or NFKC'd on top of it) it would learn pieces the
        source's pre-tokenizer never produces. Checked on public text, before any data."""
        from ..errors import RecipeError
        items = set(extractor(PROBE))
        longest = getattr(extractor, "max_length", None) or math.inf   # longer ones are dropped
        missing = [u for u in self.units_of(PROBE) if u not in items and len(u) <= longest]
        if missing:
            raise RecipeError(
                f"recipe [items]: the items are not the units of export.like's tokenizer "
                f"({self.path!r}): on the public text {PROBE!r} its pipeline makes "
                f"{missing[0]!r}, which [items] does not. Extract the items with its pipeline: "
                f"[items.tokenizer] @tokenizers = \"dp_vocab.hf_tokenizer_pipeline.v1\" with "
                f"path = {json.dumps(self.path)}, and items.lowercase = false, items.nfkc = "
                f"false (its normaliser applies). Nothing was read")

    @property
    def byte_level(self) -> bool:
        return "ByteLevel" in json.dumps(self.spec.get("pre_tokenizer"))

    @property
    def byte_fallback(self) -> bool:
        """A Unigram that spells unknown characters in bytes: its 256 byte pieces are kept."""
        return self.model == "unigram" and bool(self.spec["model"].get("byte_fallback"))

    @property
    def unk(self) -> str | None:
        m = self.spec["model"]
        if self.model == "unigram":
            return None if m.get("unk_id") is None else m["vocab"][m["unk_id"]][0]
        return m.get("unk_token")

    @property
    def roles(self) -> dict:
        """Special-token roles (``bos_token``...) as the source's tokenizer_config names them,
        and its extra special tokens (``additional_special_tokens`` in transformers 4,
        ``extra_special_tokens`` in 5)."""
        out: dict = {}
        for k, v in self.config.items():
            if k.endswith("_token") and _content(v) is not None:
                out[k] = _content(v)
            elif k in ("additional_special_tokens", "extra_special_tokens") \
                    and isinstance(v, (list, dict)):
                named = v.items() if isinstance(v, dict) else enumerate(v)
                kept = {n: _content(t) for n, t in named if _content(t) in self.special_tokens}
                if kept:
                    out[k] = kept if isinstance(v, dict) else list(kept.values())
        return out

    @property
    def roles_note(self) -> str | None:
        """A source without a tokenizer_config.json names no role (pad, eos...) and no
        ``model_max_length``: AutoTokenizer's padding then fails. Said, with the fix."""
        if self.config:
            return None
        return (f"export.like {Path(self.path).name!r} is a tokenizer.json without a "
                f"tokenizer_config.json: the export names no special-token roles (pad, eos, "
                f"...), so transformers cannot pad with it. Give a transformers tokenizer "
                f"folder as export.like (tokenizer.save_pretrained(folder)), and set "
                f"export.model_max_length")


    def alphabet(self, units) -> list[str]:
        from tokenizers import pre_tokenizers
        if self.byte_level:
            return pre_tokenizers.ByteLevel.alphabet()
        public = "".join(self.units_of(string.ascii_letters + string.digits + string.punctuation))
        return sorted({ch for u in units for ch in u} | set(public))

    def retrained(self, units: dict[str, int], vocab_size: int):
        """The source with its model trained on ``units`` towards ``vocab_size``."""
        from tokenizers import Tokenizer
        m = self.spec["model"]
        fallback = self.byte_fallback
        size = vocab_size - (len(BYTE_PIECES) if fallback else 0)
        trained = train_model(self.model, units, size, self.special_tokens,
                              self.alphabet(units), self.unk,
                              prefix=m.get("continuing_subword_prefix"))
        spec = json.loads(json.dumps(self.spec))
        model = spec["model"]
        if self.model == "unigram":
            vocab = with_byte_pieces(trained["vocab"]) if fallback \
                else [list(p) for p in trained["vocab"]]
            model["vocab"] = vocab
            model["unk_id"] = trained.get("unk_id")
            ids = {p: i for i, (p, _) in enumerate(vocab)}
        else:
            model["vocab"] = trained["vocab"]
            ids = dict(trained["vocab"])
            if self.model == "bpe":
                model["merges"] = trained["merges"]
        # special tokens keep their role, at their new ids; other added tokens were the
        # source's vocabulary, not this one's
        spec["added_tokens"] = [{**t, "id": ids[t["content"]]}
                                for t in spec.get("added_tokens", [])
                                if t.get("special") and t["content"] in ids]
        spec["post_processor"] = _with_ids(spec.get("post_processor"), ids)
        return Tokenizer.from_str(json.dumps(spec))

    def tokenizer_config(self, tok, model_max_length: int | None) -> dict:
        added = {str(tok.token_to_id(t)): {"content": t, "lstrip": False, "rstrip": False,
                                           "normalized": False, "single_word": False,
                                           "special": True}
                 for t in self.special_tokens if tok.token_to_id(t) is not None}
        keep = {k: v for k, v in self.config.items()
                if k in ("model_max_length", "padding_side", "truncation_side",
                         "clean_up_tokenization_spaces", "model_input_names")}
        if model_max_length is not None:
            keep["model_max_length"] = model_max_length
        return {"tokenizer_class": "PreTrainedTokenizerFast", **self.roles, **keep,
                "added_tokens_decoder": added}

    def describe(self) -> dict:
        import hashlib
        return {"source": self.path, "items": self.size,
                "sha256": hashlib.sha256(tokenizer_file(self.path).read_bytes()).hexdigest()}


def _content(token) -> str | None:
    """A token as a tokenizer_config writes it: a string, or a dict with its content."""
    if isinstance(token, str):
        return token
    if isinstance(token, dict) and isinstance(token.get("content"), str):
        return token["content"]
    return None


def _with_ids(node, ids: dict):
    """A post-processor's JSON with every special token's id looked up in the new vocabulary."""
    if isinstance(node, list):
        return [_with_ids(x, ids) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _with_ids(v, ids) for k, v in node.items()}
    if "tokens" in out and "ids" in out:   # TemplateProcessing's special_tokens entries
        out["ids"] = [ids[t] for t in out["tokens"]]
    for k in ("sep", "cls"):               # BertProcessing, RobertaProcessing
        v = out.get(k)
        if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and v[0] in ids:
            out[k] = [v[0], ids[v[0]]]
    return out


__all__ = ["LikeSource"]
