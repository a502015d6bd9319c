"""``streamwarden run CONFIG``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.checkpoints.run_lock import refuse_if_held
from streamwarden.cli.console import ProgressPrinter
from streamwarden.cli.doctor import preflight
from streamwarden.cli.main import log_to_file
from streamwarden.config import load_config
from streamwarden.errors import SourceError, UsageError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.ownership import check_ownership
from streamwarden.spark.logs import file_logging_conf
from streamwarden.spark.session import build_spark_session

if TYPE_CHECKING:
    from streamwarden.config.model import PipelineConfig
    from streamwarden.monitoring import QueryMonitor

__all__ = ["run_command"]


def run_command(config_path: Path, *, once: bool, drain: bool, doctor: bool = True) -> int:
    if drain and not once:
        raise UsageError("--drain only works with --once: a continuous run never reaches an end")
    config = load_config(config_path)
    if doctor:
        preflight(config, config_path)
    if not config.source.path.is_dir():
        state = "is a file, not a folder" if config.source.path.exists() else "does not exist"
        raise SourceError(
            f"landing directory {str(config.source.path)!r} {state}; create it or fix "
            f"source.path in {str(config_path)!r}"
        )
    # before the JVM starts (~20 s): a checkpoint in use, or one of another pipeline
    refuse_if_held(config.checkpoint.path, f"pipeline {config.name!r}")
    if config.checkpoint.path.is_dir():
        check_ownership(config)
    log_file = config.checkpoint.path.parent / f"{config.name}.log"
    log_to_file(log_file)
    spark = build_spark_session(
        app_name=f"streamwarden-{config.name}",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
        extra_conf={**file_logging_conf(log_file), **config.spark.conf},
        jvm_output=log_file,
    )
    printer = ProgressPrinter(config)
    Pipeline(config, spark).run(
        once=once, drain=drain, on_progress=printer, on_start=_announce(config, config_path)
    )
    return 0


def _announce(config: PipelineConfig, config_path: Path) -> Callable[[QueryMonitor | None], None]:
    """Prints what runs once the query has started, so that a pipeline that cannot start (a
    bad pattern condition, say) shows only its error. Every sink is named, the dead letters
    too: that is where a record that went missing from the outputs is to be found."""
    log_file = config.checkpoint.path.parent / f"{config.name}.log"
    outputs = ", ".join(
        [
            *(
                str(sink.path)
                for sink in (config.sinks.sessions, config.sinks.matches, config.sinks.timeouts)
                if sink is not None
            ),
            f"dead letters: {config.sinks.dead_letters.path}",
        ]
    )

    def announce(monitor: QueryMonitor | None) -> None:
        print(
            f"running {config.name!r} ({config.operator}): {config.source.path} -> {outputs} "
            f"(Spark log: {log_file})",
            flush=True,
        )
        if monitor is None:
            return
        metrics = monitor.exporter.url if monitor.exporter else "off"
        log = monitor.progress_log.path if monitor.progress_log else "off"
        print(
            f"metrics: {metrics} | progress log: {log} | "
            f"streamwarden status {config_path} shows what it is doing",
            flush=True,
        )

    return announce
