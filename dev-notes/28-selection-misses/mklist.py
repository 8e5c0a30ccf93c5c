import string, wordfreq, itertools, sys
words = wordfreq.top_n_list("en", 10**7)
punct = string.punctuation
extras = list(punct) + ["".join(p) for p in itertools.product(punct, repeat=2)]
nums = [str(i) for i in range(1000)] + [str(y) for y in range(1900, 2100)]
upper = [w.upper() for w in words[:5000] if w.upper() != w]
mode = sys.argv[1]
if mode == "front":
    out = extras + nums + upper + words
with open(f"list_{mode}.txt", "w") as f:
    seen = set()
    for w in out:
        if w not in seen:
            seen.add(w); f.write(w + "\n")
print(len(extras), len(nums), len(upper), len(words))
