"""Check a built MkDocs site (or any folder of HTML) for broken internal links, anchors and images.

    python dev-notes/browse-check/check_links.py /tmp/site

Every <a href>, <img src>, <link href> and <script src> that is not http(s)/mailto is resolved
against the file that holds it; a missing file or a missing #anchor (no element with that id or
name) is reported. External URLs are listed, not fetched.
"""
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.refs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name"):
            if a.get(k):
                self.ids.add(a[k])
        for k in ("href", "src"):
            if a.get(k) is not None and tag in ("a", "img", "link", "script", "source"):
                self.refs.append((tag, a[k]))


def parse(path, cache={}):
    if path not in cache:
        c = Collect()
        c.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = c
    return cache[path]


def main(root):
    root = Path(root).resolve()
    bad, external = [], set()
    for page in sorted(root.rglob("*.html")):
        for tag, ref in parse(page).refs:
            u = urlsplit(ref)
            if u.scheme in ("http", "https", "mailto", "data", "javascript") or ref.startswith("//"):
                if u.scheme in ("http", "https") or ref.startswith("//"):
                    external.add(ref)
                continue
            base = root if u.path.startswith("/") else page.parent
            target = page if not u.path else (base / unquote(u.path).lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{page.relative_to(root)}: <{tag}> {ref}: no file")
                continue
            if u.fragment and target.suffix == ".html" and unquote(u.fragment) not in parse(target).ids:
                bad.append(f"{page.relative_to(root)}: <{tag}> {ref}: no anchor")
    for line in bad:
        print("BROKEN", line)
    for ref in sorted(external):
        print("external", ref)
    print(f"{len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "site"))
