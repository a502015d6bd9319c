"""Flink side of issue 40's windows benchmark (PyFlink, Flink SQL window TVF, streaming).

Usage (inside the venv made by ``bench/setup_flink.sh``)::

    .venv-flink/bin/python bench/flink_windows.py --input DIR --out-of-orderness-seconds 60 \
        --state rocksdb --parallelism 2 --repeat 3

Reads every ``*.jsonl`` file of ``DIR`` one after the other in name order (their time order;
one payment per line: ``{"account": "a000123", "merchant": "m0042", "at": 1767225600000,
"amount": 12.5}``, ``at`` in epoch milliseconds) through one ``HybridSource`` of text-line
``FileSource`` s, as ``flink_sessions.py`` does, with the watermark ``rt - out_of_orderness``
(Spark's ``withWatermark`` delay), and runs a ``TUMBLE`` window TVF of ``--size-seconds`` per
``merchant`` with ``COUNT(*)`` and ``SUM(amount)``. Flink SQL's window TVF has no allowed
lateness: an event whose window has fired is dropped (counted here as input lines - events in
windows). The window rows are summed again in SQL by a one-day tumbling window on their
``window_time`` (a few rows, collected in Python), as ``flink_sessions.py`` does with sessions.

The job runs ``--repeat`` times in the same process (and JVM), each on a fresh environment, so
that the first run warms the JVM up. Prints one JSON line::

    {"engine": "flink", "input_events": ..., "runs": [{"windows": ..., "events": ...,
     "total": ..., "seconds_job_wall": ..., "seconds_net": ..., "cpu_seconds": ...}, ...]}

``seconds_job_wall``: from submitting the SQL to the last result row (planning and the local
mini-cluster's start included); ``seconds_net``: the job's net runtime by the JobManager;
``cpu_seconds``: CPU (user + system) of the JVM during the run, from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flink_sessions import (
    _positive_int,
    add_common_arguments,
    count_lines,
    create_table_env,
    flink_version,
    interval_literal,
    list_input_files,
    run_and_collect,
)
from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors import Source
from pyflink.java_gateway import get_gateway
from pyflink.table import DataTypes, Schema, StreamTableEnvironment


def register_payments(
    env: StreamExecutionEnvironment,
    t_env: StreamTableEnvironment,
    files: Sequence[Path],
    out_of_orderness_ms: int,
) -> None:
    """The view ``payments`` (``merchant``, ``amount``, rowtime ``rt``) over ``files`` read
    one after the other by one reader, watermark ``rt - out_of_orderness``."""
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
    builder = jvm.org.apache.flink.connector.base.source.hybrid.HybridSource.builder(sources[0])
    for one in sources[1:]:
        builder = builder.addSource(one)
    lines = env.from_source(
        Source(builder.build()), WatermarkStrategy.no_watermarks(), "jsonl-files", Types.STRING()
    ).set_parallelism(1)
    schema = (
        Schema.new_builder()
        .column("f0", DataTypes.STRING())
        .column_by_expression("rt", "TO_TIMESTAMP_LTZ(CAST(JSON_VALUE(f0, '$.at') AS BIGINT), 3)")
        .watermark("rt", f"rt - {interval_literal(out_of_orderness_ms)}")
        .build()
    )
    t_env.create_temporary_view("payment_lines", t_env.from_data_stream(lines, schema))
    t_env.execute_sql(
        """
        CREATE TEMPORARY VIEW payments AS
        SELECT JSON_VALUE(f0, '$.merchant') AS merchant,
               CAST(JSON_VALUE(f0, '$.amount') AS DOUBLE) AS amount,
               rt
        FROM payment_lines
        """
    )


def windows_sql(size_ms: int) -> str:
    """Tumbling windows per merchant, summed into a row per day."""
    return f"""
        WITH per_window AS (
            SELECT merchant, window_start AS w_start, window_end AS w_end,
                   window_time AS w_time, COUNT(*) AS payments, SUM(amount) AS total
            FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(rt), {interval_literal(size_ms)}))
            GROUP BY merchant, window_start, window_end, window_time
        )
        SELECT window_start, COUNT(*) AS windows, SUM(payments) AS events, SUM(total) AS total
        FROM TABLE(TUMBLE(TABLE per_window, DESCRIPTOR(w_time), INTERVAL '1' DAY))
        GROUP BY window_start, window_end
    """


def jvm_cpu_seconds() -> float:
    """CPU seconds the gateway's JVM (where the local mini-cluster runs) has used so far."""
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--size-seconds", type=_positive_int, default=60)
    parser.add_argument("--repeat", type=_positive_int, default=1)
    args = parser.parse_args(argv)
    files = list_input_files(args.input)
    runs = []
    for _ in range(args.repeat):
        env, t_env = create_table_env(
            args.state, args.parallelism, args.managed_memory, args.watermark_interval_ms, args.conf
        )
        register_payments(env, t_env, files, args.out_of_orderness_seconds * 1000)
        cpu = jvm_cpu_seconds()
        run = run_and_collect(t_env, windows_sql(args.size_seconds * 1000))
        cpu = jvm_cpu_seconds() - cpu
        runs.append(
            {
                "windows": sum(int(row[1]) for row in run.rows),
                "events": sum(int(row[2]) for row in run.rows),
                "total": sum(float(row[3]) for row in run.rows),
                "seconds_job_wall": round(run.seconds_wall, 3),
                "seconds_net": run.seconds_net,
                "cpu_seconds": round(cpu, 2),
            }
        )
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    print(
        json.dumps(
            {
                "engine": "flink",
                "state": args.state,
                "input_events": count_lines(files),
                "runs": runs,
                "files": len(files),
                "parallelism": args.parallelism,
                "out_of_orderness_seconds": args.out_of_orderness_seconds,
                "flink_version": flink_version(),
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
