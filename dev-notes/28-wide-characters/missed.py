import pickle, json, sys
from collections import Counter
users = pickle.load(open("pypi_users.pkl", "rb"))
out = sys.argv[1]
rel = set(json.loads(l)["item"] for l in open(f"{out}/vocab.jsonl"))
miss = sorted(((k, u) for u, k in users.items() if k >= 20 and u not in rel), reverse=True)
print("missed >=20:", len(miss), "released", len(rel))
for lo, hi in [(20,50),(50,100),(100,200),(200,500),(500,10**9)]:
    n = sum(1 for k,u in miss if lo<=k<hi); t = sum(1 for u,k in users.items() if lo<=k<hi)
    print(f"  users {lo}-{hi}: missed {n} of {t}")
print([ (u,k) for k,u in miss[:80]])
