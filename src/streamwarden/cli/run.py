"""``streamwarden run CONFIG``."""

from __future__ import annotations

from pathlib import Path

from streamwarden.cli.console import ProgressPrinter
from streamwarden.cli.doctor import preflight
from streamwarden.cli.main import log_to_file
from streamwarden.config import load_config
from streamwarden.errors import SourceError, UsageError
from streamwarden.pipeline import Pipeline
from streamwarden.spark.logs import file_logging_conf
from streamwarden.spark.session import build_spark_session

__all__ = ["run_command"]


def run_command(config_path: Path, *, once: bool, drain: bool, doctor: bool = True) -> int:
    if drain and not once:
        raise UsageError("--drain only works with --once: a continuous run never reaches an end")
    config = load_config(config_path)
    if doctor:
        preflight(config, config_path)
    if not config.source.path.is_dir():
        raise SourceError(
            f"landing directory {str(config.source.path)!r} does not exist; create it or fix "
            f"source.path in {str(config_path)!r}"
        )
    log_file = config.checkpoint.path.parent / f"{config.name}.log"
    log_to_file(log_file)
    spark = build_spark_session(
        app_name=f"streamwarden-{config.name}",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
        extra_conf={**file_logging_conf(log_file), **config.spark.conf},
    )
    print(
        f"running {config.name!r}: {config.source.path} -> {config.sinks.sessions.path} "
        f"(Spark log: {log_file})",
        flush=True,
    )
    Pipeline(config, spark).run(once=once, drain=drain, on_progress=ProgressPrinter())
    return 0
