"""A live Flink job for the restart benchmark (issue 21, question 2) and the state carried from
heap to RocksDB (``scale/flink_transfer.py``); runs in the PyFlink venv (``bench/setup_flink.sh``).

Usage (started and stopped by ``bench/scale/flink_job.py``'s ``FlinkJob``)::

    .venv-flink/bin/python bench/scale/flink_live.py --input DIR --live DIR --state heap \\
        --checkpoints DIR --rest-port PORT [--restore CHECKPOINT] [--query patterns] \\
        [--conf KEY=VALUE ...]

The same query as ``bench/flink_sessions.py`` (Flink SQL session windows per ``user_id``, the
sessions counted per day) or, with ``--query patterns``, as ``bench/flink_patterns.py``
(``MATCH_RECOGNIZE`` page 1 then page 2 within 30 minutes, the matches counted per day), but
never-ending, as a job in production runs: it reads the files of ``--input`` one after the
other, then watches ``--live`` and reads every file that lands there. Checkpoints every 2 s go
to ``--checkpoints`` and are retained when the job dies; RocksDB's are incremental (as a job
holding millions of keys would be configured). ``--restore`` starts the job from a retained
checkpoint or a savepoint (``execution.state-recovery.path``), as a user restarts a killed job.
The sink discards the rows: what the benchmarks watch is Flink's REST API on ``--rest-port``
(records read by the source, checkpoints completed and restored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flink_patterns import patterns_sql
from flink_sessions import (
    STATE_BACKENDS,
    create_table_env,
    key_value,
    register_events,
    sessions_sql,
)

#: How often the REST API's job metrics are refreshed (Flink's default is 10 s).
METRICS_REFRESH = "200 ms"
QUERIES = ("sessions", "patterns")
#: The session gap and the pattern's ``WITHIN``: 30 minutes, as every scale run.
WINDOW_MS = 30 * 60_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--live", type=Path, required=True)
    parser.add_argument("--state", choices=sorted(STATE_BACKENDS), default="heap")
    parser.add_argument("--checkpoints", type=Path, required=True)
    parser.add_argument("--rest-port", type=int, required=True)
    parser.add_argument("--restore", help="a retained checkpoint (its chk-N folder) or savepoint")
    parser.add_argument("--checkpoint-every", default="2s")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--query", choices=QUERIES, default="sessions")
    parser.add_argument("--out-of-orderness-seconds", type=int, default=60)
    parser.add_argument("--conf", type=key_value, action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    conf = [
        ("rest.address", "127.0.0.1"),
        ("rest.bind-address", "127.0.0.1"),
        ("rest.bind-port", str(args.rest_port)),
        ("metrics.fetcher.update-interval", METRICS_REFRESH),
        ("execution.checkpointing.interval", args.checkpoint_every),
        ("execution.checkpointing.storage", "filesystem"),
        ("execution.checkpointing.dir", args.checkpoints.resolve().as_uri()),
        ("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION"),
        ("execution.checkpointing.incremental", str(args.state == "rocksdb").lower()),
    ]
    if args.restore:
        conf.append(("execution.state-recovery.path", Path(args.restore).resolve().as_uri()))
    env, t_env = create_table_env(args.state, args.parallelism, extra_conf=[*conf, *args.conf])
    files = sorted(p.resolve() for p in args.input.glob("*.jsonl")) if args.input.exists() else []
    register_events(env, t_env, files, args.out_of_orderness_seconds * 1000, live_dir=args.live)
    columns, query = (
        ("sessions BIGINT, events BIGINT", sessions_sql(WINDOW_MS))
        if args.query == "sessions"
        else ("match_count BIGINT", patterns_sql("p1_then_p2", WINDOW_MS))
    )
    t_env.execute_sql(
        f"CREATE TEMPORARY TABLE discard (window_start TIMESTAMP(3), {columns}) "
        "WITH ('connector' = 'blackhole')"
    )
    t_env.execute_sql(f"INSERT INTO discard {query}").wait()


if __name__ == "__main__":
    main()
