"""A live Flink sessions job for the restart benchmark (issue 21, question 2); runs in the PyFlink
venv (``bench/setup_flink.sh``).

Usage (started and killed by ``bench/scale/restart.py``)::

    .venv-flink/bin/python bench/scale/flink_live.py --input DIR --live DIR --state heap \\
        --checkpoints DIR --rest-port PORT [--restore CHECKPOINT]

The same query as ``bench/flink_sessions.py`` (Flink SQL session windows per ``user_id``, the
sessions counted per day), but never-ending, as a job in production runs: it reads the files of
``--input`` one after the other, then watches ``--live`` and reads every file that lands there.
Checkpoints every 2 s go to ``--checkpoints`` and are retained when the job dies; RocksDB's are
incremental (as a job holding millions of keys would be configured). ``--restore`` starts the job
from a retained checkpoint (``execution.state-recovery.path``), as a user restarts a killed job.
The sink discards the rows: what the benchmark watches is Flink's REST API on ``--rest-port``
(records read by the source, checkpoints completed and restored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flink_sessions import (
    STATE_BACKENDS,
    create_table_env,
    register_events,
    sessions_sql,
)

#: How often the REST API's job metrics are refreshed (Flink's default is 10 s).
METRICS_REFRESH = "200 ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--live", type=Path, required=True)
    parser.add_argument("--state", choices=sorted(STATE_BACKENDS), default="heap")
    parser.add_argument("--checkpoints", type=Path, required=True)
    parser.add_argument("--rest-port", type=int, required=True)
    parser.add_argument("--restore", help="a retained checkpoint (its chk-N folder)")
    parser.add_argument("--checkpoint-every", default="2s")
    parser.add_argument("--parallelism", type=int, default=2)
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
    env, t_env = create_table_env(args.state, args.parallelism, extra_conf=conf)
    files = sorted(p.resolve() for p in args.input.glob("*.jsonl")) if args.input.exists() else []
    register_events(env, t_env, files, 60_000, live_dir=args.live)
    t_env.execute_sql(
        "CREATE TEMPORARY TABLE discard (window_start TIMESTAMP(3), sessions BIGINT, "
        "events BIGINT) WITH ('connector' = 'blackhole')"
    )
    t_env.execute_sql(f"INSERT INTO discard {sessions_sql(30 * 60_000)}").wait()


if __name__ == "__main__":
    main()
