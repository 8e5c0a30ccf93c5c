import math
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLE = REPO / "corpora" / "reddit_college_sample.jsonl.gz"
E10 = math.exp(-10)


@pytest.fixture
def sample_corpus() -> Path:
    return SAMPLE
