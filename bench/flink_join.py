"""Flink side of issue 41's interval-join benchmark (PyFlink, Flink SQL, streaming).

Usage (inside the venv made by ``bench/setup_flink.sh``)::

    .venv-flink/bin/python bench/flink_join.py --payments DIR --refunds DIR \
        --out-of-orderness-seconds 120 --types inner,left_outer --repeat 3

Reads the ``*.jsonl`` files of each folder one after the other in name order (their time
order) through one ``HybridSource`` of text-line ``FileSource`` s per folder, as
``flink_sessions.py`` does, each with the watermark ``rt - out_of_orderness`` (Spark's
``withWatermark`` delay); the join operator runs on the smaller of the two watermarks. Payments:
``{"payment_id": "p0000001", "account": "a000123", "at": 1767225600000, "amount": 12.5}``;
refunds: ``{"payment_id": ..., "at": ..., "amount": ...}``, ``at`` in epoch milliseconds. The
interval join::

    FROM payments p [LEFT] JOIN refunds r ON p.payment_id = r.payment_id
     AND r.rt BETWEEN p.rt AND p.rt + INTERVAL '1' HOUR

Flink's interval join has no allowed lateness: a row behind the watermark is still joined with
what the other side holds, but is not kept; what it loses shows in the pairs. The joined rows
are counted in SQL by a one-day tumbling window on the payment's time (a row per day, fired by
the final watermark at the latest; the interval join holds its output watermark back by the
interval), as ``flink_sessions.py`` does with sessions; the sentinels (ids ``zz-end...``) are
left out.

Each job runs ``--repeat`` times in the same process (and JVM), the types interleaved, each on a
fresh environment, so that the first run of each warms up. Prints one JSON line::

    {"engine": "flink", "input_events": ..., "runs": [{"type": "inner", "round": 1,
     "rows": ..., "pairs": ..., "seconds_job_wall": ..., "seconds_net": ..., "cpu_seconds": ...},
     ...]}

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
    STATE_BACKENDS,
    _non_negative_int,
    _positive_int,
    count_lines,
    create_table_env,
    flink_version,
    interval_literal,
    key_value,
    list_input_files,
    run_and_collect,
)
from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors import Source
from pyflink.java_gateway import get_gateway
from pyflink.table import DataTypes, Schema, StreamTableEnvironment

SENTINEL = "zz-end"
COLUMNS = {
    "payments": {"payment_id": "STRING", "account": "STRING", "amount": "DOUBLE"},
    "refunds": {"payment_id": "STRING", "amount": "DOUBLE"},
}


def register(
    env: StreamExecutionEnvironment,
    t_env: StreamTableEnvironment,
    name: str,
    files: Sequence[Path],
    out_of_orderness_ms: int,
) -> None:
    """The view ``name`` (its fields and the rowtime ``rt``) over ``files`` read one after the
    other by one reader, watermark ``rt - out_of_orderness``."""
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
        Source(builder.build()), WatermarkStrategy.no_watermarks(), f"{name}-files", Types.STRING()
    ).set_parallelism(1)
    schema = (
        Schema.new_builder()
        .column("f0", DataTypes.STRING())
        .column_by_expression("rt", "TO_TIMESTAMP_LTZ(CAST(JSON_VALUE(f0, '$.at') AS BIGINT), 3)")
        .watermark("rt", f"rt - {interval_literal(out_of_orderness_ms)}")
        .build()
    )
    t_env.create_temporary_view(f"{name}_lines", t_env.from_data_stream(lines, schema))
    fields = ", ".join(
        f"JSON_VALUE(f0, '$.{f}') AS {f}"
        if t == "STRING"
        else f"CAST(JSON_VALUE(f0, '$.{f}') AS {t}) AS {f}"
        for f, t in COLUMNS[name].items()
    )
    t_env.execute_sql(f"CREATE TEMPORARY VIEW {name} AS SELECT {fields}, rt FROM {name}_lines")


def join_sql(kind: str) -> str:
    """The interval join, counted per day of the payment's time."""
    join = "JOIN" if kind == "inner" else "LEFT JOIN"
    return f"""
        WITH joined AS (
            SELECT p.payment_id AS p_id, p.rt AS p_rt, r.payment_id AS r_id, r.amount AS r_amount
            FROM payments p {join} refunds r
              ON p.payment_id = r.payment_id
             AND r.rt BETWEEN p.rt AND p.rt + INTERVAL '1' HOUR
            WHERE p.payment_id NOT LIKE '{SENTINEL}%'
        )
        SELECT window_start, COUNT(*) AS rows_out, COUNT(r_id) AS pairs
        FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR(p_rt), INTERVAL '1' DAY))
        GROUP BY window_start, window_end
    """


def jvm_cpu_seconds() -> float:
    """CPU seconds the gateway's JVM (where the local mini-cluster runs) has used so far."""
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--payments", type=Path, required=True, help="folder of *.jsonl")
    parser.add_argument("--refunds", type=Path, required=True, help="folder of *.jsonl")
    parser.add_argument("--state", choices=sorted(STATE_BACKENDS), default="rocksdb")
    parser.add_argument("--parallelism", type=_positive_int, default=2)
    parser.add_argument("--out-of-orderness-seconds", type=_non_negative_int, default=120)
    parser.add_argument("--watermark-interval-ms", type=_positive_int, default=200)
    parser.add_argument("--managed-memory", default="1g")
    parser.add_argument("--conf", type=key_value, action="append", default=[])
    parser.add_argument("--types", default="inner,left_outer", help="inner and/or left_outer")
    parser.add_argument("--repeat", type=_positive_int, default=1)
    args = parser.parse_args(argv)
    files = {"payments": list_input_files(args.payments), "refunds": list_input_files(args.refunds)}
    kinds = [k.strip() for k in args.types.split(",")]
    runs = []
    for round_ in range(1, args.repeat + 1):
        for kind in kinds:
            env, t_env = create_table_env(
                args.state,
                args.parallelism,
                args.managed_memory,
                args.watermark_interval_ms,
                args.conf,
            )
            for name, paths in files.items():
                register(env, t_env, name, paths, args.out_of_orderness_seconds * 1000)
            cpu = jvm_cpu_seconds()
            run = run_and_collect(t_env, join_sql(kind))
            cpu = jvm_cpu_seconds() - cpu
            runs.append(
                {
                    "type": kind,
                    "round": round_,
                    "rows": sum(int(row[1]) for row in run.rows),
                    "pairs": sum(int(row[2]) for row in run.rows),
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
                "input_events": sum(count_lines(f) for f in files.values()),
                "runs": runs,
                "files": {name: len(f) for name, f in files.items()},
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
