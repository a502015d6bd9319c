"""``streamwarden status TARGET [--threads]``: what a running pipeline is doing (L14)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.cli.arguments import Subcommands

if TYPE_CHECKING:
    from streamwarden.monitoring.progress_log import BatchRecord
    from streamwarden.monitoring.status import PipelineStatus

__all__ = ["format_status", "register", "status_command"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "status", help="show what a running pipeline is doing (batch, slowest task, threads)"
    )
    parser.add_argument(
        "target", type=Path, help="the pipeline's config, its checkpoint, or <checkpoint>.progress"
    )
    parser.add_argument(
        "--threads", action="store_true", help="add thread dumps of the driver and executors"
    )
    parser.set_defaults(handler=lambda args: status_command(args.target, threads=args.threads))


def status_command(target: Path, *, threads: bool = False) -> int:
    from streamwarden.monitoring.status import collect_status, find_progress_dir

    status = collect_status(find_progress_dir(target), threads=threads)
    print(format_status(status))
    if threads and status.published.get("state") not in ("starting", "running"):
        print("(no thread dumps: --threads needs the pipeline running)")
    return 0


def format_status(status: PipelineStatus) -> str:
    p = status.published
    alive = p.get("state") in ("starting", "running")
    ui = f", UI {p.get('ui_url') or 'off'}" if alive else ""
    lines = [
        f"pipeline {p.get('query')!r}: {p.get('state')} (pid {p.get('pid')}, Spark app "
        f"{p.get('app_id')}{ui})"
    ]
    if alive:
        lines += _live(status)
    else:  # what the process published last is history: no live endpoints, no current work
        lines.append(f"progress log: {p.get('progress_log')}")
        lines.append(f"last completed batch: {p.get('last_batch', 'none')}")
    lines.append("recent batches:")
    lines.extend(_batch_lines(status.recent))
    for executor, threads in status.threads.items():
        lines.append(f"threads of executor {executor}:")
        for t in threads:
            lines.append(f'  "{t.get("threadName")}" {t.get("threadState")}')
            lines.extend(f"      at {frame}" for frame in _frames(t)[:12])
    return "\n".join(lines)


#: The narrowest each column of the recent-batches table gets: batch, in, duration, state, findings.
_MIN_WIDTHS = (5, 8, 7, 9, 1)


def _batch_lines(records: list[BatchRecord]) -> list[str]:
    """One line per batch, each column as wide as its widest value, so that the columns stay
    aligned whatever the counts (a catch-up batch can read millions of rows)."""
    cells = [
        (
            f"{r.summary.batch_id}",
            f"{r.summary.input_rows:,}",
            f"{r.summary.batch_duration_ms / 1000:.1f}s",
            f"{r.summary.state_rows:,}",
            f"{len(r.findings)}",
        )
        for r in records
    ]
    widths = [max([low, *(len(row[i]) for row in cells)]) for i, low in enumerate(_MIN_WIDTHS)]
    lines = []
    for row in cells:
        batch, rows_in, took, state, found = (v.rjust(w) for v, w in zip(row, widths, strict=True))
        lines.append(
            f"  batch {batch} | in {rows_in} | {took} | state rows {state} | findings {found}"
        )
    return lines


def _frames(thread: dict[str, Any]) -> list[str]:
    trace = thread.get("stackTrace") or []
    if isinstance(trace, dict):
        trace = trace.get("elems", [])
    return [str(f).strip() for f in trace]


def _live(status: PipelineStatus) -> list[str]:
    """What a running pipeline is doing now: endpoints, query status, jobs, slowest task."""
    p = status.published
    lines = [
        f"metrics: {p.get('prometheus_url') or 'off'}   progress log: {p.get('progress_log')}",
    ]
    query_status = p.get("query_status") or {}
    if query_status:
        lines.append(
            f"now: {query_status.get('message')} (data available: "
            f"{query_status.get('isDataAvailable')}, trigger active: "
            f"{query_status.get('isTriggerActive')})"
        )
    lines.append(f"current batch: {status.current_batch}")
    for job in status.running_jobs:
        lines.append(
            f"  running job {job['jobId']}: {job.get('numCompletedTasks', 0)}/"
            f"{job.get('numTasks', 0)} tasks done, stages {job.get('stageIds')}"
        )
    for stage in status.active_stages:
        lines.append(
            f"  active stage {stage['stageId']} ({stage.get('name', '')}): "
            f"{stage.get('numActiveTasks', 0)} running, {stage.get('numCompleteTasks', 0)}/"
            f"{stage.get('numTasks', 0)} done"
        )
    task = status.slowest_task
    lines.append(
        "slowest running task: none running"
        if task is None
        else f"slowest running task: {task.task_id} (partition {task.partition}) of stage "
        f"{task.stage_id} ({task.stage_name}) on executor {task.executor}, running for "
        f"{task.running_ms / 1000:.1f}s"
    )
    return lines
