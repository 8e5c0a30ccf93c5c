"""Runs ../28-selection-misses/anau.py (Unigram reddit: recipe with overrides, held-out excess
by class of Metaspace unit) on the current code: its `lead` module patched a function that is
gone, so an empty one stands in. Run from SCRATCH, as the scripts beside it do."""
import runpy, sys, types
from pathlib import Path
sys.modules["lead"] = types.ModuleType("lead")
runpy.run_path(str(Path(__file__).resolve().parent.parent / "28-selection-misses" / "anau.py"),
               run_name="__main__")
