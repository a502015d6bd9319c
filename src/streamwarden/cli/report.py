"""``streamwarden report PROGRESS_LOG``: chart a pipeline's progress log (PNG and HTML).

The charts need the ``report`` extra (matplotlib); without it the command says, in one line,
which ``pip install`` brings it."""

from __future__ import annotations

from pathlib import Path

from streamwarden.cli.arguments import Subcommands

__all__ = ["register", "report_command"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "report", help="chart a progress log: input, durations, state rows, checkpoint bytes"
    )
    parser.add_argument(
        "progress_log", type=Path, help="<checkpoint>.progress/progress.jsonl (or its folder)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output prefix (default: beside the log, report)"
    )
    parser.set_defaults(handler=lambda args: report_command(args.progress_log, out=args.out))


def report_command(progress_log: Path, *, out: Path | None = None) -> int:
    from streamwarden.errors import UsageError
    from streamwarden.extras import require_extra
    from streamwarden.monitoring.progress_log import read_progress_log
    from streamwarden.monitoring.report import render_report

    require_extra("report", "streamwarden report")
    records = read_progress_log(progress_log)
    if not records:
        raise UsageError(f"{str(progress_log)!r} holds no batches yet; run the pipeline first")
    folder = progress_log if progress_log.is_dir() else progress_log.parent
    prefix = out or folder / "report"
    png, page = prefix.with_suffix(".png"), prefix.with_suffix(".html")
    data = render_report(records, png, page)
    kinds = sorted({f.kind for f in data.findings})
    print(f"{len(records)} batches of {data.query!r}: {png} and {page}")
    print(f"alarms: {', '.join(kinds)}" if kinds else "alarms: none")
    return 0
