import json, gzip, pathlib
sp = pathlib.Path("VENV_SITE_PACKAGES")
n = 0
with gzip.open("code.jsonl.gz", "wt") as f:
    for p in sorted(sp.rglob("*.py")):
        try:
            t = p.read_text(encoding="utf-8")
        except Exception:
            continue
        if not t.strip() or len(t) > 200_000:
            continue
        f.write(json.dumps({"user": str(p.relative_to(sp)), "text": t}) + "\n"); n += 1
print(n)
