"""Turns an :class:`InspectReport` into the text people read and the JSON tools read."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from streamwarden.checkpoints.inspect import InspectReport, OperatorReport, StateReport

__all__ = ["report_json", "report_text"]

_BAR = 30


def report_json(report: InspectReport) -> dict[str, Any]:
    """Everything in the report as plain JSON types, plus ``leak_suspected`` at top level."""
    data = dataclasses.asdict(report)
    data["leak_suspected"] = report.leak_suspected
    for op_data, op in zip(data["operators"], report.operators, strict=True):
        op_data["leak_suspected"] = op.leak_suspected
        for state_data, state in zip(op_data["states"], op.states, strict=True):
            state_data["leak"]["suspected"] = state.leak.suspected
    return data


def report_text(report: InspectReport) -> str:
    lines = [
        f"checkpoint {report.checkpoint}"
        + (f"  (query {report.query_id})" if report.query_id else "")
    ]
    lines += _summary(report)
    for op in report.operators:
        lines += _operator(op, report)
    lines += _batches(report)
    lines.append(_verdict(report))
    return "\n".join(lines) + "\n"


def _summary(report: InspectReport) -> list[str]:
    batch_ids = [b.batch_id for b in report.batches]
    span = f"{batch_ids[0]}..{batch_ids[-1]}" if batch_ids else "none"
    running = (
        "no"
        if report.running is None
        else (f"YES, {report.running.get('what', '?')} (pid {report.running.get('pid', '?')})")
    )
    return [
        f"  batches in log {span}, last committed {report.last_committed}, "
        f"state partitions {report.shuffle_partitions}",
        f"  watermark {_time(report.watermark_ms)}",
        f"  state on disk: live {_size(report.state.live_bytes)} (what the latest version "
        f"needs), retained history {_size(report.state.history_bytes)} (older versions kept "
        "for replay, up to spark.sql.streaming.minBatchesToRetain)",
        f"  running now: {running}",
    ]


def _operator(op: OperatorReport, report: InspectReport) -> list[str]:
    mode = f", time mode {op.time_mode}" if op.time_mode else ""
    disk = sum(d.bytes for d in op.disk)
    lines = [
        "",
        f"operator {op.operator_id}: {op.name} (stores {', '.join(op.stores)}; "
        f"{op.partitions} partitions; batches {op.min_batch}..{op.max_batch}{mode})",
        f"  on disk: {_size(disk)} in {sum(d.files for d in op.disk)} files",
    ]
    if report.shuffle_partitions not in (None, op.partitions):
        lines.append(
            f"  note: the checkpoint pins {report.shuffle_partitions} partitions; this operator's "
            "unversioned metadata still says the count before a rescale (Spark leaves it)"
        )
    for state in op.states:
        lines += _state(state, op)
    if op.timers is not None:
        lines.append(f"  timers: {op.timers.rows} registered")
        lines += _histogram("time to deadline", op.timers.time_to_deadline)
    return lines


def _state(state: StateReport, op: OperatorReport) -> list[str]:
    ttl = "with TTL" if state.ttl else "no TTL"
    kind = "store" if state.kind == "store" else f"{state.kind}, {ttl}"
    disk = {d.partition: d.bytes for d in op.disk}
    lines = [
        f"  state {state.name!r} ({kind}): {state.rows} rows, {state.keys} keys, "
        f"~{_size(state.approx_bytes)}",
        "    partition      rows    ~bytes      disk",
    ]
    lines += [
        f"    {p.partition:9d} {p.rows:9d} {p.approx_bytes:9d} {disk.get(p.partition, 0):9d}"
        for p in state.partitions
    ]
    if state.rows:
        mean = state.rows / max(op.partitions, 1)
        largest = max(p.rows for p in state.partitions)
        lines.append(f"    largest partition / mean: {largest / mean:.2f}")
    if state.heaviest_keys:
        lines.append("    heaviest keys (~bytes, rows):")
        lines += [f"      {k.key}  {k.approx_bytes}  {k.rows}" for k in state.heaviest_keys]
    if state.age_histogram is not None:
        lines += _histogram(f"key age: {state.age_meaning}", state.age_histogram)
    else:
        lines.append("    key age: not derivable from this state's content")
    flag = "LEAK SUSPECT" if state.leak.suspected else "deadline"
    count = "" if state.leak.suspect_keys is None else f"{state.leak.suspect_keys} keys: "
    lines.append(f"    {flag}: {count}{state.leak.reason}")
    if state.leak.sample:
        lines.append(f"      e.g. {', '.join(state.leak.sample)}")
    return lines


def _histogram(title: str, buckets: list[tuple[str, int]]) -> list[str]:
    peak = max((n for _, n in buckets), default=0) or 1
    lines = [f"    {title}:"]
    lines += [f"      {label:>6} {n:9d} {'#' * round(_BAR * n / peak)}" for label, n in buckets]
    return lines


def _batches(report: InspectReport) -> list[str]:
    logs = report.log_bytes
    lines = [
        "",
        "per batch (bytes): offsets, commit, state metadata, state written; seconds planned->"
        "committed",
        "    batch   offsets    commit  st-meta  st-written  seconds",
    ]
    for b in report.batches:
        commit = "-" if b.commit_bytes is None else str(b.commit_bytes)
        secs = "-" if b.seconds is None else f"{b.seconds:.2f}"
        lines.append(
            f"    {b.batch_id:5d} {b.offsets_bytes:9d} {commit:>9} {b.state_metadata_bytes:8d}"
            f" {b.state_written_bytes:11d} {secs:>8}"
        )
    lines.append("  logs and metadata: " + ", ".join(f"{k} {_size(v)}" for k, v in logs.items()))
    return lines


def _verdict(report: InspectReport) -> str:
    if not report.operators:
        return "\nno stateful operators with committed state"
    if report.leak_suspected:
        names = [f"{op.operator_id} ({op.name})" for op in report.operators if op.leak_suspected]
        return f"\nLEAK SUSPECTED in operator {', '.join(names)}: state without a deadline"
    return "\nno leak suspected: every key with state has a deadline"


def _time(ms: int) -> str:
    if ms <= 0:
        return "none (0)"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
