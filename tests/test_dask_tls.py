"""Private data in transit: a Dask run sends item sets to a remote scheduler only over TLS with
the recipe's certificates, or over plain tcp:// when the recipe opts in by name; anything else
stops before any data is read. The TLS cluster runs on 127.0.0.1 with certificates made here."""

import gzip
import json
import shutil
import subprocess
from itertools import islice
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from dp_vocab.errors import ParameterError  # noqa: E402
from dp_vocab.recipes import plan_run, run_recipe  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
from dp_vocab.ingest.corpora.bundled import SAMPLE  # noqa: E402

# one xdist worker runs this file: its module fixtures are made once
pytestmark = pytest.mark.xdist_group("dask_tls")

KEY = "11" * 32


def _recipe(corpus: Path, **run) -> dict:
    return {"run": {"seed": 5, "key": KEY, **run},
            "corpus": {"@readers": "dp_vocab.jsonl.v1", "path": str(corpus)},
            "items": {"@extractors": "dp_vocab.items.v1",
                      "tokenizer": {"@tokenizers": "dp_vocab.regex.v1"}},
            "mechanism": {"@mechanisms": "dp_vocab.policy_gaussian.v1", "epsilon": 3.0,
                          "delta": 1e-5, "max_items_per_user": 50}}


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> dict:
    """A CA, and a certificate it signed for 127.0.0.1 (scheduler, worker and client)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    d = tmp_path_factory.mktemp("tls")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=dp-vocab test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
            "-subj", "/CN=127.0.0.1")
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "node.pem", "-days", "2", "-extfile", "ext.cnf")
    return {"tls_ca_file": str(d / "ca.pem"), "tls_cert": str(d / "node.pem"),
            "tls_key": str(d / "node.key")}


@pytest.fixture(scope="module")
def tls_cluster(certs):
    from distributed import LocalCluster
    from distributed.security import Security
    node = {"cert": certs["tls_cert"], "key": certs["tls_key"]}
    security = Security(tls_ca_file=certs["tls_ca_file"], require_encryption=True,
                        **{f"tls_{who}_{k}": v for who in ("scheduler", "worker", "client")
                           for k, v in node.items()})
    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                           protocol="tls://", host="127.0.0.1", security=security,
                           dashboard_address=None)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("c") / "part.jsonl.gz"
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f, gzip.open(path, "wt") as g:
        g.writelines(islice(f, 3000))
    return path


def test_a_tls_cluster_runs_the_recipe_as_a_local_run_does(tmp_path, certs, tls_cluster,
                                                           corpus):
    address = tls_cluster.scheduler_address
    assert address.startswith("tls://127.0.0.1:")
    from distributed import Client
    with pytest.raises(TypeError, match="TLS expects a `ssl_context`"):
        Client(address, timeout=5)   # the cluster speaks TLS only: no plain client gets in
    local = run_recipe(_recipe(corpus), tmp_path / "local")
    remote = run_recipe(_recipe(corpus, backend="dask", scheduler_address=address, **certs),
                        tmp_path / "tls")
    assert remote.record["backend"] == {"backend": "dask", "scheduler": address}
    assert len(local.release.items) > 50 and remote.release.items == local.release.items
    # the certificates' paths are in the resolved recipe (as the corpus path is), not the record
    assert certs["tls_key"] not in json.dumps(remote.record)


def _refused(tmp_path, corpus, **run) -> str:
    """The run's error; the corpus is never read (a read would fail on its bad line), the
    output never made."""
    out = tmp_path / "out"
    with pytest.raises(ParameterError) as e:
        run_recipe(_recipe(corpus, **run), out)
    assert not out.exists()
    return str(e.value)


def test_where_private_data_may_go_is_checked_before_reading(tmp_path, certs):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text("{not json\n")
    tcp = "tcp://10.0.0.7:8786"
    msg = _refused(tmp_path, corpus, backend="dask", scheduler_address=tcp)
    assert msg.startswith(f"run.scheduler_address: expected a tls:// address with "
                          f"run.tls_ca_file and run.tls_cert") and "unencrypted" in msg
    assert "Set run.send_private_data_unencrypted = true only if" in msg
    # Dask's default scheme is tcp
    assert "expected a tls:// address" in _refused(tmp_path, corpus, backend="dask",
                                                   scheduler_address="10.0.0.7:8786")
    msg = _refused(tmp_path, corpus, backend="dask", scheduler_address="tls://10.0.0.7:8786")
    assert msg.startswith("run.tls_ca_file: expected a PEM file for a tls:// scheduler")
    msg = _refused(tmp_path, corpus, backend="dask", scheduler_address="tls://10.0.0.7:8786",
                   **{**certs, "tls_cert": str(tmp_path / "missing.pem")})
    assert msg.startswith("run.tls_cert: expected the path of an existing PEM file")
    assert "expected null with a tcp:// scheduler" in _refused(
        tmp_path, corpus, backend="dask", scheduler_address=tcp,
        send_private_data_unencrypted=True, **certs)
    assert "expected a tls:// address (or tcp:// with" in _refused(
        tmp_path, corpus, backend="dask", scheduler_address="ws://10.0.0.7:8786",
        send_private_data_unencrypted=True)
    assert "run.send_private_data_unencrypted: expected true or false, got a string, 'yes'" in _refused(
        tmp_path, corpus, backend="dask", scheduler_address=tcp,
        send_private_data_unencrypted="yes")
    # settings that would do nothing: no remote scheduler to apply them to
    assert "run.tls_ca_file: expected null (it applies only with a scheduler_address" in _refused(
        tmp_path, corpus, backend="dask", **certs)
    assert "only with backend = \"dask\"" in _refused(tmp_path, corpus, **certs)
    assert "run.send_private_data_unencrypted: expected null" in _refused(
        tmp_path, corpus, send_private_data_unencrypted=True)
    # the explicit opt-in is accepted (checked in plan_run, which reads no data)
    plan_run(_recipe(corpus, backend="dask", scheduler_address=tcp,
                     send_private_data_unencrypted=True), tmp_path / "o")
