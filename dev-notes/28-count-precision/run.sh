# The calls behind README.md, from SCRATCH_PREV (releases out_pc3 / out_pc1 / out_pcr3 / out_ugc3 /
# out_ugc1 / out_ugcr3 / out_ugr1new / out_wp45_3 / out_wp45_1 of the shipped recipes, seed 1, by
# ../28-prior-usage/ana.py; SCRATCH_WIDE/out_wprx3 the reddit WordPiece release of ../28-wide-characters/).
P=REPO/.venv/bin/python
$P -u SCRATCH/scr.py out_pc3 basep_bpe.json pypi.pkl pypi_users.pkl
$P -u SCRATCH/share.py out_pc3 pypi_train.jsonl
$P -u SCRATCH/mlora.py out_pc3 0,5,15 ANY
$P -u SCRATCH/mlora.py out_pc3 5,15 zh,ja,ko,ru,ar,he,el,hi,es,pt,fr,de,tr,vi,uk,fa,pl,it,id
$P -u SCRATCH/exactcnt.py out_pc3 pypi_train.jsonl pypi.pkl basep_bpe.json 0,0.5
$P -u SCRATCH/exactcnt.py out_pc3 pypi_train.jsonl pypi.pkl basep_bpe.json -1,-2
$P -u SCRATCH/exactcnt.py out_pc3 pypi_train.jsonl pypi.pkl basep_bpe.json 962,1443,4810,15000
$P -u SCRATCH/exactcnt.py out_pc1 pypi_train.jsonl pypi.pkl basep_bpe.json 0,0.5
$P -u SCRATCH/exactcnt.py out_pcr3 reddit_train.jsonl reddit.pkl baser_bpe.json 0,0.5
$P -u SCRATCH/tweedie.py out_pc3 basep_bpe.json pypi.pkl bpe 1,0.5
$P -u SCRATCH/tweedie.py out_pcr3 baser_bpe.json reddit.pkl bpe 1,0.5
$P -u SCRATCH/selcnt.py out_pc3 pypi_train.jsonl pypi.pkl basep_bpe.json 3
$P -u SCRATCH/rexparts.py out_pc3 basep_bpe.json pypi.pkl none,one=0.5,both=0.5,floor
$P -u SCRATCH/rexparts.py out_pc1 basep_bpe.json pypi.pkl none,one=0.5,both=0.5,floor
BASE=basep_bpe.json NOCLS=1 $P -u REPO/dev-notes/28-prior-usage/ana.py cs4p3 '{"budget.counts_share": 0.4}' 3
TRAIN=reddit_train.jsonl HELD=reddit.pkl BASE=baser_bpe.json NOCLS=1 $P -u REPO/dev-notes/28-prior-usage/ana.py cs4r3 '{"budget.counts_share": 0.4}' 3
$P -u SCRATCH/unc.py out_wp45_3 SCRATCH_WIDE/base_p_wordpiece.json pypi.pkl wordpiece 1e-5,1e-4,2e-4,2.5e-4,3e-4,1e-3
$P -u SCRATCH/unc.py out_wp45_1 SCRATCH_WIDE/base_p_wordpiece.json pypi.pkl wordpiece 1e-5,2.5e-4,3e-4
$P -u SCRATCH/unc.py SCRATCH_WIDE/out_wprx3 SCRATCH_WIDE/base_r_wordpiece.json reddit.pkl wordpiece 1e-5,2.5e-4,3e-4
$P -u SCRATCH/unc.py out_ugc3 SCRATCH_WIDE/base_p_unigram.json pypi.pkl unigram 1e-5,1e-4,2.5e-4,1e-3
$P -u SCRATCH/unc.py out_ugc1 SCRATCH_WIDE/base_p_unigram.json pypi.pkl unigram 1e-5,1e-4,2.5e-4,1e-3
$P -u SCRATCH/unc.py out_ugcr3 SCRATCH_WIDE/base_r_unigram.json reddit.pkl unigram 1e-5,1e-4,2.5e-4,1e-3
$P -u SCRATCH/unc.py out_ugr1new SCRATCH_WIDE/base_r_unigram.json reddit.pkl unigram 1e-5,2.5e-4,1e-3
$P -u SCRATCH/unc.py out_pc3 basep_bpe.json pypi.pkl bpe 1e-5,2.5e-4
$P -u SCRATCH/cov.py out_ugc3 SCRATCH_WIDE/base_p_unigram.json pypi.pkl unigram c0.9995,w5e-4
$P -u SCRATCH/cov.py out_ugc1 SCRATCH_WIDE/base_p_unigram.json pypi.pkl unigram c0.9995,w5e-4
$P -u SCRATCH/cov.py out_ugcr3 SCRATCH_WIDE/base_r_unigram.json reddit.pkl unigram c0.9995
$P -u SCRATCH/cov.py out_ugr1new SCRATCH_WIDE/base_r_unigram.json reddit.pkl unigram c0.9995
$P -u SCRATCH/cov.py out_pc3 basep_bpe.json pypi.pkl bpe c0.9995
$P -u SCRATCH/cov.py out_pcr3 baser_bpe.json reddit.pkl bpe c0.9995
$P -u SCRATCH/wcnt.py out_pc3 pypi_train.jsonl pypi.pkl basep_bpe.json 10000 1,0.25 1,2
