"""Where a run's logs go: one file, named in its errors, never the terminal.

The ``streamwarden`` Python log, PySpark's query-error loggers and the JVM's own output (log4j,
with any Java trace) all go to one log file, so that the user sees one ``Error: ...`` line (see
:mod:`streamwarden.cli.main`) and the file keeps the rest. :mod:`streamwarden.cli.main` and every
command that starts Spark use this module; it imports neither of them.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.spark.jvm import PYSPARK_QUERY_LOGGERS
from streamwarden.spark.logs import file_logging_conf, unwritable_log
from streamwarden.spark.session import build_spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["keep_pyspark_traces_off_the_terminal", "log_to_file", "spark_logging_to"]


def log_to_file(path: Path | None = None) -> logging.FileHandler:
    """Sends the ``streamwarden`` Python log to ``path`` (once), never to the terminal. Without
    ``path``, and if no file was chosen yet, the log goes to ``streamwarden.log`` in the
    temporary folder."""
    logger = logging.getLogger("streamwarden")
    for handler in logger.handlers:
        if isinstance(handler, logging.FileHandler):
            return handler
    target = path or Path(tempfile.gettempdir()) / "streamwarden.log"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(target)
    except OSError as exc:
        raise unwritable_log(target, exc) from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    return handler


def spark_logging_to(
    log_file: Path,
    *,
    app_name: str,
    master: str,
    shuffle_partitions: int,
    conf: Mapping[str, str] | None = None,
    jars: tuple[str, ...] = (),
) -> SparkSession:
    """A SparkSession whose Python, PySpark and JVM logs all go to ``log_file``. The log
    settings come first, so that ``conf`` (a pipeline's ``[spark.conf]``) may override them.
    ``jars`` (a connector's) join the engine's on the class path."""
    log_to_file(log_file)
    return build_spark_session(
        app_name=app_name,
        master=master,
        shuffle_partitions=shuffle_partitions,
        extra_conf={**file_logging_conf(log_file, master), **(conf or {})},
        extra_jars=jars,
        jvm_output=log_file,
    )


class _IntoStreamwardenLog(logging.Handler):
    """Hands records to the ``streamwarden`` log file (see :func:`log_to_file`)."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger("streamwarden")
        if not logger.handlers:
            log_to_file()
        logger.handle(record)


def keep_pyspark_traces_off_the_terminal() -> None:
    """Sends PySpark's query-error loggers to our log file instead of stderr; the error itself
    still reaches the user as one message."""
    from pyspark.logger import PySparkLogger

    for name in PYSPARK_QUERY_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            if not isinstance(handler, _IntoStreamwardenLog):
                logger.removeHandler(handler)
        if not logger.handlers:
            logging.Logger.addHandler(logger, _IntoStreamwardenLog())
