"""Variant: parts whose marks are only apostrophes do not count towards the unmarked share."""
import re, sys, runpy
from dp_vocab.export import trained as TR
_am = TR._after_marks
APOS = re.compile(r"['\u2019]+[^\W\d_]+")
TR._after_marks = lambda unit, marker: _am(unit, marker) and APOS.fullmatch(unit) is None
sys.argv = ["anau.py"] + sys.argv[1:]
runpy.run_path("anau.py", run_name="__main__")
