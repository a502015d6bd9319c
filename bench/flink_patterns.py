"""Flink side of the pattern benchmark (PyFlink, Flink SQL ``MATCH_RECOGNIZE``).

Usage (inside the venv made by ``bench/setup_flink.sh``)::

    .venv-flink/bin/python bench/flink_patterns.py --input DIR \
        --pattern p1_then_p2 --within-minutes 30 --state rocksdb --parallelism 2 \
        [--out-of-orderness-seconds 300]

Reads every ``*.jsonl`` file of ``DIR`` (same input, sources, options and
watermarks as ``flink_sessions.py``, see there), runs one
``MATCH_RECOGNIZE`` per ``user_id`` ordered by event time, streaming mode, and
prints one JSON line (with ``--rounds N`` the job runs N times in the same JVM; the
top-level figures are the first, cold round's and ``rounds`` lists every round)::

    {"engine": "flink", "pattern": "p1_then_p2", "state": "rocksdb",
     "matches": ..., "seconds": ..., "seconds_total": ..., ...}

Patterns (``W`` = ``--within-minutes``, default 30; every match must end less
than ``W`` after it starts: ``WITHIN`` prunes a partial match once an event
``>= W`` after its first row arrives; after a match, matching resumes after its
last row: ``AFTER MATCH SKIP PAST LAST ROW``; the other events of the user may
lie anywhere in between, since ``MATCH_RECOGNIZE`` only knows strict
contiguity, an undefined variable (any row) with a reluctant ``*?`` stands for
"followed by, with anything in between"):

``p1_then_p2``
    ``PATTERN (A C*? B) WITHIN W`` with ``A.page_number = 1`` and
    ``B.page_number = 2``: a page-1 event followed, not necessarily directly,
    by a page-2 event of the same user with ``B.ts - A.ts < W``. One match per
    such pair; the next match starts after the page-2 event, so each page-2
    event closes at most one match, and 1, 1, 2 is one match.

``three_stage``
    ``PATTERN (A X*? B Y*? C) WITHIN W`` with ``A.page_number = 1``,
    ``B.page_number BETWEEN 2 AND 5`` and ``C.page_number = 6``: a page-1
    event, then one or more events with pages 2..5 (the first one is ``B``,
    further ones, and any other event, fall into ``Y``), then a page-6 event,
    all of the same user, with ``C.ts - A.ts < W``. Matches do not overlap
    (the next one starts after ``C``).

A row is late for ``MATCH_RECOGNIZE`` as soon as it is not newer than the
watermark (the operator buffers rows and sorts them by time up to the
watermark), so ``--out-of-orderness-seconds`` must cover the input's disorder,
or rows are silently dropped and matches lost.

Both definitions are mirrored by the brute-force references in
``bench/make_sample_events.py`` (``reference_p1_then_p2`` and
``reference_three_stage``). The order of a user's events with equal
timestamps is not defined (Flink takes them in arrival order); the references
assume distinct timestamps per user.

RocksDB: Flink's CEP operator is slow on RocksDB for this workload (measured
on 20,000 events: about 45 s against 10 s on the heap backend). For every
buffered row and timer it iterates several RocksDB map states
(``SharedBuffer.advanceTime``, ``CepOperator.getSortedTimestamps``: jstack
shows the time in ``RocksIterator.seek``), and those prefix seeks have to skip
the delete tombstones the operator itself leaves behind, which pile up in the
memtable until it is flushed (the RocksDB log shows memtables of mostly
deletions). Small write buffers bound that:
``--conf state.backend.rocksdb.memory.managed=false
--conf state.backend.rocksdb.writebuffer.size=64kb``. Measured on 2 busy
cores, ``p1_then_p2``: 200,000 events took 184 s with these options and did
not finish in 480 s without them; 2,000,000 events took 1,349 s with them
(59 s on the heap backend).

The matches are counted in SQL with a one-day tumbling window on
``MATCH_ROWTIME()`` (a few rows, fired by the final watermark at the latest)
and summed in Python. Timings as in ``flink_sessions.py``: ``seconds`` is
Flink's net job runtime, ``seconds_job_wall`` the wall time from submitting the
SQL to having the result, ``seconds_total`` the whole script.
"""

from __future__ import annotations

import time

_T_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

# flink_sessions.py sits next to this file; when run as a script its folder is
# already sys.path[0], this also covers importing this file from elsewhere.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from flink_sessions import (  # noqa: E402
    add_common_arguments,
    count_lines,
    create_table_env,
    flink_version,
    interval_literal,
    list_input_files,
    register_events,
    run_and_collect,
)

PATTERNS: dict[str, tuple[str, str]] = {
    # name: (PATTERN body, DEFINE clause)
    "p1_then_p2": (
        "A C*? B",
        "A AS A.page_number = 1, B AS B.page_number = 2",
    ),
    "three_stage": (
        "A X*? B Y*? C",
        "A AS A.page_number = 1, B AS B.page_number BETWEEN 2 AND 5, C AS C.page_number = 6",
    ),
}


def patterns_sql(pattern: str, within_ms: int) -> str:
    """SQL counting the matches of ``pattern``, one row per day."""
    body, define = PATTERNS[pattern]
    return f"""
        WITH found AS (
            SELECT m_time
            FROM events
            MATCH_RECOGNIZE (
                PARTITION BY user_id
                ORDER BY rt
                MEASURES MATCH_ROWTIME() AS m_time
                ONE ROW PER MATCH
                AFTER MATCH SKIP PAST LAST ROW
                PATTERN ({body}) WITHIN {interval_literal(within_ms)}
                DEFINE {define}
            ) AS m
        )
        SELECT window_start, COUNT(*) AS match_count
        FROM TABLE(TUMBLE(TABLE found, DESCRIPTOR(m_time), INTERVAL '1' DAY))
        GROUP BY window_start, window_end
    """


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--pattern", choices=sorted(PATTERNS), default="p1_then_p2")
    parser.add_argument(
        "--within-minutes",
        "--gap-minutes",
        dest="within_minutes",
        type=float,
        default=30.0,
        help="a match must end less than this after it starts (default 30)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the job this many times in this one JVM; the first round is cold, later "
        "rounds run on a JVM whose compiler has warmed up (default 1)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.within_minutes * 60_000 < 1:
        parser.error("--within-minutes is too small")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    args = parse_args(argv)
    within_ms = round(args.within_minutes * 60_000)
    files = list_input_files(args.input)
    env, t_env = create_table_env(
        args.state,
        args.parallelism,
        args.managed_memory,
        args.watermark_interval_ms,
        args.conf,
    )
    register_events(env, t_env, files, args.out_of_orderness_seconds * 1000, args.source_mode)
    sql = patterns_sql(args.pattern, within_ms)
    runs = [run_and_collect(t_env, sql) for _ in range(args.rounds)]
    run = runs[0]
    matches = sum(int(row[1]) for row in run.rows)
    input_events = count_lines(files)
    seconds_total = time.perf_counter() - _T_START
    print(
        json.dumps(
            {
                "engine": "flink",
                "pattern": args.pattern,
                "state": args.state,
                "matches": matches,
                "seconds": round(
                    run.seconds_net if run.seconds_net is not None else run.seconds_wall, 3
                ),
                "seconds_total": round(seconds_total, 3),
                "seconds_job_wall": round(run.seconds_wall, 3),
                "input_events": input_events,
                "files": len(files),
                "source_mode": args.source_mode,
                "parallelism": args.parallelism,
                "within_minutes": args.within_minutes,
                "out_of_orderness_seconds": args.out_of_orderness_seconds,
                "flink_version": flink_version(),
                # every round, the first (cold) one included, as the fields above
                "rounds": [
                    {
                        "seconds": round(
                            r.seconds_net if r.seconds_net is not None else r.seconds_wall, 3
                        ),
                        "seconds_job_wall": round(r.seconds_wall, 3),
                        "matches": sum(int(row[1]) for row in r.rows),
                    }
                    for r in runs
                ],
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
