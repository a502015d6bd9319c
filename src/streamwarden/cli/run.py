"""``streamwarden run CONFIG``: a pipeline from its config file, once or until interrupted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.doctor import preflight
from streamwarden.errors import UsageError

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands
    from streamwarden.config.model import PipelineConfig
    from streamwarden.monitoring import QueryMonitor
    from streamwarden.monitoring.failures import QueryFailure
    from streamwarden.pipeline.interrupt import StopRequest
    from streamwarden.pipeline.runner import RunResult
    from streamwarden.plan import PipelinePlan

__all__ = ["add_run_options", "register", "run_command"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser("run", help="run a pipeline from its config file")
    add_run_options(parser)
    parser.set_defaults(
        handler=lambda args: run_command(
            args.config, once=args.once, drain=args.drain, doctor=not args.skip_doctor
        )
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The config and the options of a run, shared by ``run`` and ``submit``."""
    parser.add_argument("config", type=Path, help="pipeline config (.toml or .yaml)")
    parser.add_argument(
        "--once", action="store_true", help="process what is in the source now, then stop"
    )
    parser.add_argument(
        "--drain",
        action="store_true",
        help="with --once: then close every session (end of a finite input)",
    )
    parser.add_argument(
        "--skip-doctor", action="store_true", help="start even if streamwarden doctor finds errors"
    )


def run_command(
    config_path: Path, *, once: bool, drain: bool, doctor: bool = True, master: str | None = None
) -> int:
    """Runs the pipeline of ``config_path``; on ``master`` instead of the config's, if given."""
    # loaded here, not at import, so that `streamwarden --help` and `doctor` stay fast
    from streamwarden.config import load_config
    from streamwarden.pipeline.interrupt import stop_requested_on_signals
    from streamwarden.pipeline.loading import on_master
    from streamwarden.spark.permissions import parse_umask, process_umask

    if drain and not once:
        raise UsageError("--drain only works with --once: a continuous run never reaches an end")
    config = load_config(config_path)
    if master is not None:
        config = on_master(config, master)
    # from here on SIGINT and SIGTERM only ask to stop: while Spark starts, too; every file
    # the run creates gets the config's file_umask
    with stop_requested_on_signals() as stop, process_umask(parse_umask(config.file_umask)):
        result = _run(config, config_path, once=once, drain=drain, doctor=doctor, stop=stop)
    if result.stopped is not None:
        print(
            f"Stopped on {result.stopped}: the checkpoint is consistent and the next run "
            "resumes from it",
            file=sys.stderr,
            flush=True,
        )
    return 0


def _run(
    config: PipelineConfig,
    config_path: Path,
    *,
    once: bool,
    drain: bool,
    doctor: bool,
    stop: StopRequest,
) -> RunResult:
    from streamwarden.pipeline import Pipeline
    from streamwarden.pipeline.console import ProgressPrinter
    from streamwarden.pipeline.result import RunResult as Stopped
    from streamwarden.pipeline.wait_connections import wait_for_connections
    from streamwarden.plan import PipelinePlan

    plan = PipelinePlan.of(config)
    # each with its own error and exit code: a broker down (1), a topic missing (2)...; a
    # continuous run waits for a connection that is down (bounded, one line per attempt)
    supervisor = config.supervisor
    if not wait_for_connections(
        plan.check_connections,
        limit=None if once else supervisor.wait_for_connections,
        first_backoff=supervisor.initial_backoff,
        max_backoff=supervisor.max_backoff,
        stop=stop,
        say=lambda line: print(f"waiting: {line}", file=sys.stderr, flush=True),
    ):
        return Stopped(stopped=stop.signal_name)  # while waiting: nothing ran
    if doctor:
        preflight(config, config_path)
    # the run takes the checkpoint's lock, then starts Spark (its logs into the log file), then
    # checks the checkpoint belongs to this pipeline: each once, in the runner
    printer = ProgressPrinter(config)
    pipeline = Pipeline(plan, log_file=_log_file(config))
    pipeline.on_warning = lambda line: print(f"warning: {line}", file=sys.stderr, flush=True)
    return pipeline.run(
        once=once,
        drain=drain,
        on_progress=printer,
        on_start=_announce(plan, config_path),
        supervise=config.supervisor.enabled,
        on_failure=_say_failure,
        stop=stop,
    )


def _say_failure(failure: QueryFailure) -> None:
    """One line per failure on stderr, with what the supervisor does about it."""
    if failure.restart is None:
        return  # the error itself is printed as the run ends
    print(
        f"{failure.describe()}; restart {failure.restart} in {failure.backoff_s:.1f} s "
        "from the checkpoint (the full trace is in the Spark log)",
        file=sys.stderr,
        flush=True,
    )


def _log_file(config: PipelineConfig) -> Path:
    """Where a pipeline's Spark log goes: beside its checkpoint, named after the pipeline."""
    return config.checkpoint.path.parent / f"{config.name}.log"


def _announce(plan: PipelinePlan, config_path: Path) -> Callable[[QueryMonitor | None], None]:
    """Prints what runs once the query has started, so that a pipeline that cannot start (a
    bad pattern condition, say) shows only its error. Every sink is named, the dead letters
    too: that is where a record that went missing from the outputs is to be found."""
    config = plan.config
    log_file = _log_file(config)
    sinks = {name: kind.where(config.sinks[name]) for name, kind in plan.sinks.items()}
    dead_letters = sinks.pop("dead_letters")
    outputs = ", ".join([*sinks.values(), f"dead letters: {dead_letters}"])
    if plan.history is not None and config.history is not None:
        store = plan.history.where(config.history, config.context)
        outputs += f"; history store: {store}"
    source = plan.source.where(config.source)

    def announce(monitor: QueryMonitor | None) -> None:
        print(
            f"running {config.name!r} ({config.operator}): {source} -> {outputs} "
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
