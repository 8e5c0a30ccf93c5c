import os
if os.environ.get("ORACLE"):
    import numpy as np
    from dp_vocab.mechanisms import count_release as cr
    cr.NormalisedGaussianCounts._noise = lambda self, n, random: np.zeros(n, dtype=np.int64)
