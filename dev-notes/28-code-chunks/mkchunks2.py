"""A code corpus the size of reddit_college: site-packages .py files cut into 40-line chunks, one user
each; each chunk's user id is drawn so that the benchmark's held-out hash puts all of a file's chunks
on the side the file's own path falls (no file on both sides of the split)."""
import json, gzip, pathlib, hashlib, sys
sys.path.insert(0, "REPO")
from dp_vocab.research.heldout import is_held_out
sp = pathlib.Path("SITE_PACKAGES")
n = 0
with gzip.open("codechunks2.jsonl.gz", "wt") as f:
    for p in sorted(sp.rglob("*.py")):
        try:
            t = p.read_text(encoding="utf-8")
        except Exception:
            continue
        if not t.strip() or len(t) > 200_000:
            continue
        side = is_held_out(str(p.relative_to(sp)), 0.2)
        lines = t.splitlines(keepends=True)
        for i in range(0, len(lines), 40):
            c = "".join(lines[i:i + 40])
            if not c.strip():
                continue
            j = 0
            while True:
                u = hashlib.sha1(f"{p}:{i}:{j}".encode()).hexdigest()[:16]
                if is_held_out(u, 0.2) == side:
                    break
                j += 1
            f.write(json.dumps({"user": u, "text": c}) + "\n"); n += 1
print(n)
