"""MkDocs hooks (``hooks:`` in mkdocs.yml) for the site built from docs/.

* Heading ids never start with a digit: the theme's scroll-spy looks them up with
  ``querySelector("#1-update-rule")``, which throws on such an id (the proofs number their
  sections).
* The proofs (docs/proofs/, links to the package's dp_vocab/mechanisms/*.md) write optima as
  ``λ*``, ``π*(n)``, ``k*``; outside code spans, a star right after a lone variable is escaped so
  that Markdown does not read two of them as the ends of an italic span.
"""
import re

from markdown.extensions.toc import slugify as _toc_slugify

# a lone variable (a letter not inside a word, with any combining marks or primes) and its star
_OPTIMUM_STAR = re.compile(r"(?<![\w*\\])([^\W\d_][\u0300-\u036f′]*)\*(?!\*)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def _slugify(value: str, separator: str) -> str:
    slug = _toc_slugify(value, separator)
    return f"s{separator}{slug}" if slug[:1].isdigit() else slug


def on_config(config):
    config.mdx_configs.setdefault("toc", {})["slugify"] = _slugify
    return config


def _escape_optimum_stars(text: str) -> str:
    out, at = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_OPTIMUM_STAR.sub(r"\1\\*", text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_OPTIMUM_STAR.sub(r"\1\\*", text[at:]))
    return "".join(out)


def on_page_markdown(markdown, page, **kwargs):
    if page.file.src_uri.startswith("proofs/"):
        return "\n".join(_escape_optimum_stars(line) for line in markdown.split("\n"))
    return markdown


try:   # the API page's docstrings (mkdocstrings, mkdocs.yml's python handler `extensions`)
    import griffe
except ImportError:   # pragma: no cover - mkdocstrings brings griffe
    griffe = None
else:
    class RuntimeDocstrings(griffe.Extension):
        """Docstrings written when their module is imported, read from the imported object:
        ``make_mechanism``'s lists the registered mechanisms and their parameters."""

        PATHS = ("dp_vocab.registry.make_mechanism",)

        def on_function_instance(self, *, node, func, agent, **kwargs):
            if func.path in self.PATHS:
                import importlib
                import inspect
                module, name = func.path.rsplit(".", 1)
                doc = getattr(importlib.import_module(module), name).__doc__
                func.docstring = griffe.Docstring(inspect.cleandoc(doc), parent=func)
