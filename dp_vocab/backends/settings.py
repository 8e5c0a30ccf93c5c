"""The [run] settings that say where private data goes (a Dask cluster, over which link),
checked before any data is read, whichever backend the run uses."""

from __future__ import annotations

from ..errors import ParameterError

# [run] keys of a remote Dask cluster reached over TLS (Dask's own ``Security``): PEM files
TLS_KEYS = ("tls_ca_file", "tls_cert", "tls_key")
# the explicit opt-in to send users' item sets to a tcp:// scheduler, unencrypted
UNENCRYPTED = "send_private_data_unencrypted"


def check_run(run: dict) -> None:
    """The [run] settings of where private data goes, checked before any is read: a Dask
    ``scheduler_address`` must be ``tls://`` with the recipe's certificates, or ``tcp://``
    only with ``send_private_data_unencrypted = true``. Its workers may be on any machine, so
    every ``tcp://`` scheduler counts as remote (a LocalCluster, with no address, stays on
    this machine)."""
    backend, address, opt_in = run.get("backend"), run.get("scheduler_address"), \
        run.get(UNENCRYPTED, False)
    if not isinstance(opt_in, bool):
        raise ParameterError(f"run.{UNENCRYPTED}", opt_in, "true or false")
    given = [k for k in TLS_KEYS if run.get(k) is not None]
    if backend != "dask" or address is None:
        for key, used in [*((k, True) for k in given), (UNENCRYPTED, opt_in),
                          ("scheduler_address", address is not None)]:
            if used:
                where = "backend = \"dask\"" if backend != "dask" else "a scheduler_address"
                raise ParameterError(f"run.{key}", run.get(key), f"null (it applies only with "
                                     f"{where}: a remote Dask cluster)",
                                     f"Remove run.{key}, or set run.backend = \"dask\" and "
                                     f"run.scheduler_address.")
        return
    if not isinstance(address, str) or not address.strip():
        raise ParameterError("run.scheduler_address", address,
                             "null (a LocalCluster) or an address such as "
                             "\"tls://scheduler:8786\"")
    scheme = address.split("://", 1)[0].lower() if "://" in address else "tcp"
    if scheme == "tls":
        from pathlib import Path
        for key in ("tls_ca_file", "tls_cert"):
            if run.get(key) is None:
                raise ParameterError(f"run.{key}", None, "a PEM file for a tls:// scheduler "
                                     "(tls_ca_file: the cluster's CA certificate; tls_cert: "
                                     "this client's certificate, with its key unless tls_key "
                                     "names the key's file)")
        for key in given:
            value = run[key]
            if not isinstance(value, str) or not Path(value).is_file():
                raise ParameterError(f"run.{key}", value, "the path of an existing PEM file")
            try:
                Path(value).open("rb").close()
            except OSError as e:
                raise ParameterError(f"run.{key}", value, "a readable PEM file",
                                     f"It cannot be read: {e.strerror}.") from None
        return
    if given:
        raise ParameterError(f"run.{given[0]}", run[given[0]],
                             f"null with a {scheme}:// scheduler (certificates apply to "
                             f"tls:// only)", "Use the scheduler's tls:// address.")
    if scheme != "tcp":
        raise ParameterError("run.scheduler_address", address,
                             "a tls:// address (or tcp:// with "
                             f"run.{UNENCRYPTED} = true)")
    if not opt_in:
        raise ParameterError("run.scheduler_address", address,
                             "a tls:// address with run.tls_ca_file and run.tls_cert: a tcp:// "
                             "scheduler would receive users' item sets unencrypted",
                             f"Set run.{UNENCRYPTED} = true only if every machine and link "
                             f"between here, the scheduler and its workers is trusted.")
