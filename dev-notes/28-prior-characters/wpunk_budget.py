# ../28-prior-forms/wpunk.py with the prior's character budget set by NC (default 800).
import os, runpy, sys
sys.path.insert(0, "REPO")
import dp_vocab.export.hf as H
NC = int(os.environ.get("NC", "800"))
for k in dir(H):
    c = getattr(H, k)
    if isinstance(c, type) and hasattr(c, "_new_characters"):
        c._new_characters = lambda self: NC
if __name__ == "__main__":
    runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "28-prior-forms", "wpunk.py"),
                   run_name="__main__")
