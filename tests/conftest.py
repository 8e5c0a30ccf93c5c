import math
from pathlib import Path

import pytest
from dp_vocab.ingest.corpora.bundled import SAMPLE

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
E10 = math.exp(-10)


@pytest.fixture(autouse=True, scope="session")
def _public_list_cache(tmp_path_factory):
    """The public-list cache of this test session (CLI subprocesses inherit it), not the
    user's ~/.cache/dp-vocab; pytest removes it with its other temporary directories."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DP_VOCAB_CACHE_DIR", str(tmp_path_factory.mktemp("dp-vocab-cache")))
        yield


@pytest.fixture
def sample_corpus() -> Path:
    return SAMPLE
