import string, wordfreq, itertools, sys
words = wordfreq.top_n_list("en", 10**7)
punct = string.punctuation
marks = list(punct)
pairs = ["".join(p) for p in itertools.product(punct, repeat=2)]
runs = [m * n for m in punct for n in range(3, 7)]
nums = [str(i) for i in range(1000)] + [f"{i:02d}" for i in range(10)] + [str(y) for y in range(1900, 2100)]
upper = [w.upper() for w in words[:5000] if w.upper() != w]
mode = sys.argv[1]
if mode == "A":
    out = marks + pairs + runs + nums + words
elif mode == "B":   # numbers interleaved by wordfreq frequency
    f = {w: wordfreq.word_frequency(w, "en") for w in nums}
    wf = [(w, wordfreq.word_frequency(w, "en")) for w in words[:200000]]
    merged = sorted(wf + list(f.items()), key=lambda kv: -kv[1])
    out = marks + pairs + runs + [w for w, _ in merged] + words[200000:]
elif mode == "C":
    out = marks + pairs + runs + nums + upper + words
with open(f"list_{mode}.txt", "w") as fh:
    seen = set()
    for w in out:
        if w not in seen:
            seen.add(w); fh.write(w + "\n")
