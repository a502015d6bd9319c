"""Sends the JVM's log to a file: the CLI shows one clear line, the log keeps the trace."""

from __future__ import annotations

from pathlib import Path

from streamwarden.errors import UsageError
from streamwarden.spark.network import is_local_master

__all__ = ["file_logging_conf", "unwritable_log"]

_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"


def file_logging_conf(log_file: Path, master: str = "local[2]") -> dict[str, str]:
    """Spark settings that route the driver's log4j output to ``log_file``, and in local mode
    that of its executors too. They must be set before the JVM starts, i.e. on the first
    session.

    Executors of a cluster master keep the cluster manager's log (their ``stderr``: a worker's
    ``work/<app>/<executor>/``, ``kubectl logs``, ``yarn logs``): this file and this package's
    log configuration are paths on the driver's host, and many JVMs appending to one file on a
    shared mount would interleave their lines."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    options = f"-Dlog4j2.configurationFile=file:{_CONFIG} -Dstreamwarden.log={log_file}"
    conf = {"spark.driver.extraJavaOptions": options}
    if is_local_master(master):
        conf["spark.executor.extraJavaOptions"] = options
    return conf


def unwritable_log(path: Path, exc: OSError) -> UsageError:
    """The error for a log file that cannot be created or opened."""
    return UsageError(
        f"cannot write the log file {str(path)!r}: {exc.strerror or exc}; make its folder "
        "writable (for `run`, the log goes beside the checkpoint)"
    )
