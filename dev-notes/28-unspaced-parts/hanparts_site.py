import os, re
MODE = os.environ.get("HAN_PARTS", "")
if MODE:
    from dp_vocab.ingest.text import tokenizers as tk
    _RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
    _enc = {}
    def _bytes_to_unicode():
        bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
        cs = bs[:]
        n = 0
        for b in range(256):
            if b not in bs:
                bs.append(b); cs.append(256 + n); n += 1
        return dict(zip(bs, map(chr, cs)))
    B2U = _bytes_to_unicode(); U2B = {v: k for k, v in B2U.items()}
    def enc(s): return "".join(B2U[b] for b in s.encode("utf-8"))
    def dec(u): return bytes(U2B[c] for c in u).decode("utf-8", "replace")
    ns = [int(x) for x in MODE.split(",")]
    def parts_of(text):
        out = []
        for m in _RUN.finditer(text):
            r = m.group(0)
            for n in ns:
                out += [r[i:i + n] for i in range(len(r) - n + 1)]
        return out
    _orig = tk.HFPreTokenizer.__call__
    def call(self, text):
        units = _orig(self, text)
        if self.kind == "byte_level":
            extra = []
            for u in units:
                if not u.lstrip("Ġ").isascii():
                    t = dec(u)
                    extra += [enc(p) for p in parts_of(t)]
            return units + extra
        if self.kind.startswith("metaspace"):
            extra = []
            base = [p for p, _ in self._pre.pre_tokenize_str(self._whitespace.normalize_str(text))]
            for u in base:
                if not u.isascii():
                    extra += parts_of(u)
            return units + extra
        return units
    tk.HFPreTokenizer.__call__ = call
