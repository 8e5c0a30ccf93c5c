cd SCRATCH_PREV
P=REPO/.venv/bin/python
BASE=basep_bpe.json NOCLS=1 $P -u ana.py pc1 '{"mechanism.public_bands": [[10000, 8.0], [40000, 4.0], [100000, 2.0], [320000, 0.5], [1000000, 0.1]]}' 1 > SCRATCH/pc1.log 2>&1 &
TRAIN=reddit_train.jsonl HELD=reddit.pkl BASE=baser_bpe.json NOCLS=1 $P -u ana.py pcr1 '{"mechanism.public_bands": [[10000, 8.0], [40000, 4.0], [100000, 2.0], [320000, 0.5], [1000000, 0.1]]}' 1 > SCRATCH/pcr1.log 2>&1
wait
SEED=2 BASE=basep_bpe.json NOCLS=1 $P -u ana.py pc3s2 '{"mechanism.public_bands": [[10000, 8.0], [40000, 4.0], [100000, 2.0], [320000, 0.5], [1000000, 0.1]]}' 3 > SCRATCH/pc3s2.log 2>&1 &
SEED=2 BASE=basep_bpe.json NOCLS=1 $P -u ana.py p3s2 '{}' 3 > SCRATCH/p3s2.log 2>&1
wait
SEED=2 TRAIN=reddit_train.jsonl HELD=reddit.pkl BASE=baser_bpe.json NOCLS=1 $P -u ana.py pcr3s2 '{"mechanism.public_bands": [[10000, 8.0], [40000, 4.0], [100000, 2.0], [320000, 0.5], [1000000, 0.1]]}' 3 > SCRATCH/pcr3s2.log 2>&1 &
SEED=2 TRAIN=reddit_train.jsonl HELD=reddit.pkl BASE=baser_bpe.json NOCLS=1 $P -u ana.py r3s2 '{}' 3 > SCRATCH/r3s2.log 2>&1
wait
