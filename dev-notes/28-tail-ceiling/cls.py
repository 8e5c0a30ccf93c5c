"""Held-out excess by class on a saved BPE release (NON-PRIVATE dev analysis): SCRATCH_PREV/rex.py's split,
with another corpus's files. python cls.py OUT BASE HELD USERS"""
import builtins, pickle, sys
sys.path.insert(0, "SCRATCH_PREV")
import rex
from tokenizers import Tokenizer
out, basef, heldf, usersf = sys.argv[1:5]
rel, items = rex.load(out)
priv, base = Tokenizer.from_file(out + "/hf/tokenizer.json"), Tokenizer.from_file(basef)
held = pickle.load(open(heldf, "rb"))
real_open = builtins.open   # rex.classes reads pypi_users.pkl by name: give it this corpus's table
builtins.open = lambda f, *a, **k: real_open(usersf if f == "pypi_users.pkl" else f, *a, **k)
rex.classes(priv, base, held, rel)
