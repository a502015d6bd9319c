"""Flink side of the session-window benchmark (PyFlink, Flink SQL, streaming).

Usage (inside the venv made by ``bench/setup_flink.sh``)::

    .venv-flink/bin/python bench/flink_sessions.py --input DIR --gap-minutes 30 \
        --state rocksdb --parallelism 2 [--out-of-orderness-seconds 300]

Reads every ``*.jsonl`` file of ``DIR`` (one pageview per line:
``{"user_id": "u000123", "ts": 1767225600000, "page_number": 1, "url": "/page/1"}``,
``ts`` in epoch milliseconds, UTC), runs a Flink SQL ``SESSION`` window TVF per
``user_id`` on event time in streaming mode, and prints one JSON line::

    {"engine": "flink", "state": "rocksdb", "events": ..., "sessions": ...,
     "seconds": ..., "seconds_total": ..., ...}

Semantics and design:

* **Sessions.** A session is a maximal run of one user's events whose
  consecutive gaps are all shorter than the gap; a gap of exactly the gap
  starts a new session. Flink's session window is ``[first ts, last ts + gap)``
  but its window merging treats *touching* windows as overlapping, so a gap of
  exactly ``gap`` would merge two sessions; the query therefore uses
  ``gap - 1 ms`` as the Flink session gap, which on millisecond timestamps is
  exactly "consecutive gap < gap".
* **Reading the files.** A plain filesystem source over the directory is
  wrong for event time: its readers take the files in no particular order
  (observed: 2, 3, 1, 0), so a file read after a later one is entirely behind
  the watermark and its events are dropped as late (about half of a 4-file
  sample was). So, by default (``--source-mode sequential``), the files are
  read one after the other in name order, which must be their time order (as
  with rotated logs, and as both the project's generator and
  ``make_sample_events.py`` write them): a ``HybridSource`` chains one
  text-line ``FileSource`` per file (built through the py4j gateway, PyFlink
  has no wrapper for it), read by one reader; the lines are parsed with
  ``JSON_VALUE`` in the same task, so reading and parsing run at parallelism
  1 and the keyed (stateful) operators at ``--parallelism``. The watermark
  advances with the data, as in a live stream, so state stays bounded. An
  event may be out of order by up to ``--out-of-orderness-seconds``, also
  across a file boundary. ``--source-mode per-file`` instead makes one
  filesystem/JSON table per file, each with its own watermark, and ``UNION
  ALL``: right for files that each span the whole time range (partitions);
  for time-ordered files it is exact too, but the combined watermark (the
  minimum over files) stays in the first file until it is done, so nearly all
  the input is held in state; every file is one more source operator, so keep
  it to some tens of files.
* **Watermark.** ``rt - out_of_orderness - 2 ms``. 1 ms of the slack, as in
  Flink's DataStream ``BoundedOutOfOrdernessWatermarks``, keeps an event tied
  with the latest timestamp on time; the other 1 ms makes up for the 1 ms
  shorter session gap (a session window fires at ``window_end - 1 ms``, and an
  event at exactly ``last + gap - 1 ms`` must still find it open).
* **Out-of-orderness default.** ``--out-of-orderness-seconds`` defaults to
  300 (5 minutes), not 0: events can be out of order by a few minutes within a
  file, and with 0 such events are late (the session window drops an event
  only when its session has already fired, but ``MATCH_RECOGNIZE`` drops every
  event older than the watermark). Pass ``0`` only for data in time order.
  The delay does not change any count on in-bound data, only how long state
  is kept.
* **End of input.** The sources are bounded; when a source finishes it emits
  the final ``MAX_WATERMARK``, which fires every remaining window, so all
  sessions are counted (checked against a brute-force reference).
* **Input validity.** Lines are assumed well-formed, with ``ts`` in epoch
  milliseconds (for the project's generator: ``ts_format="millis"``, no
  malformed records); there is no malformed-record handling.
* **Sink.** The per-session rows are aggregated again in SQL, with a tumbling
  one-day window on the session's ``window_time`` (a row per day, fired by the
  final watermark at the latest), and the few rows are collected and summed in
  Python. Session rows are emitted before the watermark that fired them, so
  this second window drops nothing.
* **State backend.** ``--state rocksdb`` sets ``state.backend.type: rocksdb``,
  ``--state heap`` sets ``hashmap``. No checkpointing.
* **Timing.** ``seconds`` is the job's net runtime as measured by Flink's
  JobManager (job submitted to job finished; excludes Python and JVM start-up,
  SQL planning and the start of the local mini-cluster). ``seconds_job_wall``
  is the wall time from submitting the SQL to having the result (includes
  planning and mini-cluster start). ``seconds_total`` is the wall time of the
  whole script, from its first line (Python interpreter start excluded).

Extra keys: ``input_events`` (lines read by Python, outside the timed part; if
``events`` is smaller, some events arrived too late for the watermark and were
dropped: raise ``--out-of-orderness-seconds``), ``files``, ``source_mode``,
``parallelism``,
``gap_minutes``, ``out_of_orderness_seconds``, ``flink_version``.
"""

from __future__ import annotations

import time

_T_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from pyflink.common import Configuration, Types, WatermarkStrategy  # noqa: E402
from pyflink.datastream import StreamExecutionEnvironment  # noqa: E402
from pyflink.datastream.connectors import Source  # noqa: E402
from pyflink.java_gateway import get_gateway  # noqa: E402
from pyflink.table import DataTypes, Schema, StreamTableEnvironment  # noqa: E402

STATE_BACKENDS = {"rocksdb": "rocksdb", "heap": "hashmap"}
SOURCE_MODES = ("sequential", "per-file")
DEFAULT_OUT_OF_ORDERNESS_SECONDS = 300
DEFAULT_MANAGED_MEMORY = "512m"
WATERMARK_SLACK_MS = 2  # see the module docstring
DEFAULT_WATERMARK_INTERVAL_MS = 200  # Flink's default


@dataclass(frozen=True)
class JobRun:
    """Rows collected from one Flink job and its timings."""

    rows: list[tuple[Any, ...]]
    seconds_net: float | None  # JobManager's net runtime, if available
    seconds_wall: float  # execute_sql() call to last row collected


def interval_literal(ms: int) -> str:
    """A Flink SQL ``INTERVAL ... DAY TO SECOND(3)`` literal of ``ms`` ms.

    Plain ``INTERVAL 'n' SECOND`` literals are limited to two digits.
    """
    if ms < 0:
        raise ValueError(f"negative interval: {ms} ms")
    seconds, millis = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return (
        f"INTERVAL '{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}' DAY TO SECOND(3)"
    )


def list_input_files(input_dir: Path) -> list[Path]:
    """Every non-empty ``*.jsonl`` file directly in ``input_dir``, sorted."""
    if not input_dir.is_dir():
        raise SystemExit(f"--input {input_dir}: not a directory")
    files = sorted(p.resolve() for p in input_dir.glob("*.jsonl") if p.stat().st_size > 0)
    if not files:
        raise SystemExit(f"--input {input_dir}: no non-empty *.jsonl file")
    return files


def count_lines(files: Sequence[Path]) -> int:
    """Number of non-blank lines (events) in ``files``."""
    total = 0
    for path in files:
        with path.open("rb") as fh:
            total += sum(1 for line in fh if line.strip())
    return total


def create_table_env(
    state: str,
    parallelism: int,
    managed_memory: str = DEFAULT_MANAGED_MEMORY,
    watermark_interval_ms: int = DEFAULT_WATERMARK_INTERVAL_MS,
    extra_conf: Sequence[tuple[str, str]] = (),
) -> tuple[StreamExecutionEnvironment, StreamTableEnvironment]:
    """A streaming execution environment on a local mini-cluster and its table
    environment.

    ``managed_memory`` is the mini-cluster's ``taskmanager.memory.managed.size``
    (Flink's local default is 128m; RocksDB takes its block cache and write
    buffers from it, the window operators take their buffers from it).
    ``extra_conf`` pairs (``--conf KEY=VALUE``) are set last.
    """
    config = Configuration()
    config.set_string("execution.runtime-mode", "streaming")
    config.set_string("state.backend.type", STATE_BACKENDS[state])
    config.set_string("parallelism.default", str(parallelism))
    config.set_string("taskmanager.memory.managed.size", managed_memory)
    config.set_string("table.local-time-zone", "UTC")
    config.set_string("pipeline.auto-watermark-interval", f"{watermark_interval_ms} ms")
    for key, value in extra_conf:
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    return env, StreamTableEnvironment.create(env)


def register_events(
    env: StreamExecutionEnvironment,
    t_env: StreamTableEnvironment,
    files: Sequence[Path],
    out_of_orderness_ms: int,
    source_mode: str = "sequential",
    live_dir: Path | None = None,
) -> None:
    """Register the view ``events`` (``user_id``, ``page_number``, rowtime
    ``rt``) over ``files``, with the watermark
    ``rt - out_of_orderness - WATERMARK_SLACK_MS``.

    ``sequential``: one HybridSource reads the files one after the other in the
    given order. ``per-file``: one filesystem table per file, ``UNION ALL``.
    ``live_dir`` (sequential only) makes the stream unbounded: after the files,
    the source watches that folder (every second) and reads each new file, as a
    live job does; ``files`` may then be empty.
    """
    watermark_delay = interval_literal(out_of_orderness_ms + WATERMARK_SLACK_MS)
    if source_mode == "sequential":
        _register_sequential(env, t_env, files, watermark_delay, live_dir)
    elif live_dir is not None:
        raise ValueError("a live folder needs the sequential source mode")
    elif source_mode == "per-file":
        _register_per_file(t_env, files, watermark_delay)
    else:
        raise ValueError(f"unknown source mode: {source_mode}")


def _register_sequential(
    env: StreamExecutionEnvironment,
    t_env: StreamTableEnvironment,
    files: Sequence[Path],
    watermark_delay: str,
    live_dir: Path | None = None,
) -> None:
    """HybridSource of one text-line FileSource per file (Java objects built
    through the py4j gateway: PyFlink has no HybridSource wrapper), parsed
    with ``JSON_VALUE`` in SQL; with ``live_dir``, a last, unbounded
    FileSource monitoring that folder."""
    gateway = get_gateway()
    jvm = gateway.jvm
    j_path = jvm.org.apache.flink.core.fs.Path
    file_source = jvm.org.apache.flink.connector.file.src.FileSource
    text_lines = jvm.org.apache.flink.connector.file.src.reader.TextLineInputFormat

    def one_file(path: Path) -> Any:
        paths = gateway.new_array(j_path, 1)
        paths[0] = j_path(path.as_uri())
        return file_source.forRecordStreamFormat(text_lines(), paths).build()

    sources = [one_file(path) for path in files]
    if live_dir is not None:
        paths = gateway.new_array(j_path, 1)
        paths[0] = j_path(live_dir.resolve().as_uri())
        sources.append(
            file_source.forRecordStreamFormat(text_lines(), paths)
            .monitorContinuously(jvm.java.time.Duration.ofSeconds(1))
            .build()
        )
    if len(sources) == 1:
        source = sources[0]
    else:
        builder = jvm.org.apache.flink.connector.base.source.hybrid.HybridSource.builder(sources[0])
        for one in sources[1:]:
            builder = builder.addSource(one)
        source = builder.build()
    lines = env.from_source(
        Source(source), WatermarkStrategy.no_watermarks(), "jsonl-files", Types.STRING()
    ).set_parallelism(1)  # one reader: files strictly one after the other
    schema = (
        Schema.new_builder()
        .column("f0", DataTypes.STRING())  # an atomic stream's column is f0
        .column_by_expression("rt", "TO_TIMESTAMP_LTZ(CAST(JSON_VALUE(f0, '$.ts') AS BIGINT), 3)")
        .watermark("rt", f"rt - {watermark_delay}")
        .build()
    )
    t_env.create_temporary_view("event_lines", t_env.from_data_stream(lines, schema))
    t_env.execute_sql(
        """
        CREATE TEMPORARY VIEW events AS
        SELECT JSON_VALUE(f0, '$.user_id') AS user_id,
               CAST(JSON_VALUE(f0, '$.page_number') AS INT) AS page_number,
               rt
        FROM event_lines
        """
    )


def _register_per_file(
    t_env: StreamTableEnvironment, files: Sequence[Path], watermark_delay: str
) -> None:
    """One filesystem/JSON table per file, each with its own watermark."""
    for i, path in enumerate(files):
        t_env.execute_sql(
            f"""
            CREATE TEMPORARY TABLE events_{i} (
                user_id STRING,
                ts BIGINT,
                page_number INT,
                url STRING,
                rt AS TO_TIMESTAMP_LTZ(ts, 3),
                WATERMARK FOR rt AS rt - {watermark_delay}
            ) WITH (
                'connector' = 'filesystem',
                'path' = '{path.as_uri()}',
                'format' = 'json'
            )
            """
        )
    union = "\nUNION ALL\n".join(
        f"SELECT user_id, page_number, rt FROM events_{i}" for i in range(len(files))
    )
    t_env.execute_sql(f"CREATE TEMPORARY VIEW events AS\n{union}")


def run_and_collect(t_env: StreamTableEnvironment, sql: str) -> JobRun:
    """Run ``sql`` as one job, collect its (few) rows and time it."""
    start = time.perf_counter()
    result = t_env.execute_sql(sql)
    with result.collect() as it:
        rows = [tuple(row) for row in it]
    wall = time.perf_counter() - start
    seconds_net: float | None = None
    job_client = result.get_job_client()
    if job_client is not None:
        try:
            seconds_net = job_client.get_job_execution_result().result().get_net_runtime() / 1000
        except Exception:  # the net runtime is a nice-to-have; fall back to wall time
            seconds_net = None
    return JobRun(rows=rows, seconds_net=seconds_net, seconds_wall=wall)


def sessions_sql(gap_ms: int) -> str:
    """SQL counting sessions and the events in them, one row per day."""
    # Flink merges touching session windows; gap - 1 ms makes "gap == gap"
    # start a new session (see the module docstring).
    flink_gap = interval_literal(gap_ms - 1)
    return f"""
        WITH per_session AS (
            SELECT user_id, window_start AS s_start, window_end AS s_end,
                   window_time AS s_time, COUNT(*) AS cnt
            FROM TABLE(SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(rt), {flink_gap}))
            GROUP BY user_id, window_start, window_end, window_time
        )
        SELECT window_start, COUNT(*) AS sessions, SUM(cnt) AS events
        FROM TABLE(TUMBLE(TABLE per_session, DESCRIPTOR(s_time), INTERVAL '1' DAY))
        GROUP BY window_start, window_end
    """


def flink_version() -> str:
    """Installed apache-flink version."""
    from importlib.metadata import version

    return version("apache-flink")


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE: {text}")
    return key.strip(), value.strip()


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared with ``flink_patterns.py``."""
    parser.add_argument("--input", type=Path, required=True, help="directory of *.jsonl files")
    parser.add_argument("--state", choices=sorted(STATE_BACKENDS), default="rocksdb")
    parser.add_argument("--parallelism", type=_positive_int, default=2)
    parser.add_argument(
        "--source-mode",
        choices=SOURCE_MODES,
        default="sequential",
        help="sequential: read the files one after the other in name order, which "
        "must be their time order (rotated logs); per-file: one source per file, "
        "all read at once (files that each span the whole time range, like "
        "partitions). Default: sequential",
    )
    parser.add_argument(
        "--out-of-orderness-seconds",
        type=_non_negative_int,
        default=DEFAULT_OUT_OF_ORDERNESS_SECONDS,
        help="watermark delay: must cover how far events are out of time order "
        f"(default {DEFAULT_OUT_OF_ORDERNESS_SECONDS})",
    )
    parser.add_argument(
        "--watermark-interval-ms",
        type=_positive_int,
        default=DEFAULT_WATERMARK_INTERVAL_MS,
        help="pipeline.auto-watermark-interval: how often (processing time) the "
        f"sources emit a watermark (default {DEFAULT_WATERMARK_INTERVAL_MS})",
    )
    parser.add_argument(
        "--managed-memory",
        default=DEFAULT_MANAGED_MEMORY,
        help=f"taskmanager.memory.managed.size (default {DEFAULT_MANAGED_MEMORY})",
    )
    parser.add_argument(
        "--conf",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Flink configuration, repeatable (applied last)",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--gap-minutes", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.gap_minutes * 60_000 < 2:
        parser.error("--gap-minutes is too small")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    args = parse_args(argv)
    gap_ms = round(args.gap_minutes * 60_000)
    files = list_input_files(args.input)
    env, t_env = create_table_env(
        args.state,
        args.parallelism,
        args.managed_memory,
        args.watermark_interval_ms,
        args.conf,
    )
    register_events(env, t_env, files, args.out_of_orderness_seconds * 1000, args.source_mode)
    run = run_and_collect(t_env, sessions_sql(gap_ms))
    sessions = sum(int(row[1]) for row in run.rows)
    events = sum(int(row[2]) for row in run.rows)
    input_events = count_lines(files)
    seconds_total = time.perf_counter() - _T_START
    print(
        json.dumps(
            {
                "engine": "flink",
                "state": args.state,
                "events": events,
                "sessions": sessions,
                "seconds": round(
                    run.seconds_net if run.seconds_net is not None else run.seconds_wall, 3
                ),
                "seconds_total": round(seconds_total, 3),
                "seconds_job_wall": round(run.seconds_wall, 3),
                "input_events": input_events,
                "files": len(files),
                "source_mode": args.source_mode,
                "parallelism": args.parallelism,
                "gap_minutes": args.gap_minutes,
                "out_of_orderness_seconds": args.out_of_orderness_seconds,
                "flink_version": flink_version(),
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
