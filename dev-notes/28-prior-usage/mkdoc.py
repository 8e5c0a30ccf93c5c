"""Docstrings of site-packages modules: one user per file, its docstrings as documents."""
import ast, json, gzip, pathlib, sys
sp = pathlib.Path(sys.argv[1])
n = u = 0
with gzip.open("docs.jsonl.gz", "wt") as f:
    for p in sorted(sp.rglob("*.py")):
        try:
            tree = ast.parse(p.read_text(encoding="utf-8"))
        except Exception:
            continue
        docs = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                d = ast.get_docstring(node)
                if d and d.strip():
                    docs.append(d.strip())
        if not docs:
            continue
        u += 1
        for d in docs:
            f.write(json.dumps({"user": str(p.relative_to(sp)), "text": d}) + "\n"); n += 1
print(u, n)
