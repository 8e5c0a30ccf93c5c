import os
from dp_vocab.export import trained
K = float(os.environ.get("PRIOR_SCALE", "1"))
_fill = trained.PublicPrior.fill
def fill(self, units, units_of, new_characters):
    out = _fill(self, units, units_of, new_characters)
    pos = {u for u, c in units.items() if c > 0}
    return {u: (c if u in pos else max(1e-6, c * K)) for u, c in out.items()}
trained.PublicPrior.fill = fill
