"""Sends the JVM's log to a file: the CLI shows one clear line, the log keeps the trace."""

from __future__ import annotations

from pathlib import Path

from streamwarden.errors import UsageError

__all__ = ["file_logging_conf", "unwritable_log"]

_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"


def file_logging_conf(log_file: Path) -> dict[str, str]:
    """Spark settings that route the driver's (and local executors') log4j output to
    ``log_file``. They must be set before the JVM starts, i.e. on the first session."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    options = f"-Dlog4j2.configurationFile=file:{_CONFIG} -Dstreamwarden.log={log_file}"
    return {"spark.driver.extraJavaOptions": options, "spark.executor.extraJavaOptions": options}


def unwritable_log(path: Path, exc: OSError) -> UsageError:
    """The error for a log file that cannot be created or opened."""
    return UsageError(
        f"cannot write the log file {str(path)!r}: {exc.strerror or exc}; make its folder "
        "writable (for `run`, the log goes beside the checkpoint)"
    )
