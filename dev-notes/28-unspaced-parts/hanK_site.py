import os
K = float(os.environ.get("HAN_K", "1"))
if K != 1:
    from dp_vocab.export import trained
    _orig = trained.PublicPrior.script_lists
    def script_lists(self, released, units_of, text_of):
        out = _orig(self, released, units_of, text_of)
        return [(t, s * K) for t, s in out]
    trained.PublicPrior.script_lists = script_lists
