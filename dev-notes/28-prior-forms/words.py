import os
from dp_vocab.export import trained
N = int(os.environ.get("PRIOR_WORDS", "150000"))
_init = trained.PublicPrior.__init__
def init(self, source, words=150_000):
    _init(self, source, N)
trained.PublicPrior.__init__ = init
