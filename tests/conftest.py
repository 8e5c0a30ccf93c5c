import math
import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLE = REPO / "corpora" / "reddit_college_sample.jsonl.gz"
E10 = math.exp(-10)

# the public-list cache of this test session, not the user's (~/.cache/dp-vocab)
os.environ.setdefault("DP_VOCAB_CACHE_DIR", tempfile.mkdtemp(prefix="dp-vocab-cache-"))


@pytest.fixture
def sample_corpus() -> Path:
    return SAMPLE
