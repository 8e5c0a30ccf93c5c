"""``python -m spacy dp-vocab ...``: adds the dp-vocab commands to spaCy's CLI (light import)."""

from spacy.cli._util import app as _spacy_app

from . import app

_spacy_app.add_typer(app, name="dp-vocab")
