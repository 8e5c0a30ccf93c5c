"""Held-out excess by class on a saved BPE release (NON-PRIVATE dev analysis). cls.py OUT BASE HELD USERS"""
import sys, pickle
sys.path.insert(0, "SCRATCH_PREV")
import rex
from tokenizers import Tokenizer
out, basef, heldf, usersf = sys.argv[1:5]
rel, items = rex.load(out)
_load = pickle.load
orig_open = open
class P:
    pass
priv = Tokenizer.from_file(out + "/hf/tokenizer.json"); base = Tokenizer.from_file(basef)
held = _load(orig_open(heldf, "rb"))
import builtins
real = builtins.open
builtins.open = lambda f, *a, **k: real(usersf if f == "pypi_users.pkl" else f, *a, **k)
rex.classes(priv, base, held, rel)
