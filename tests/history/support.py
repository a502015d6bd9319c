"""Helpers for the history tests: a pipeline config with either history store (the Delta
sessions table, or a table of the test session's PostgreSQL server), reading back every revision
a run wrote, and sessions computed offline from all events (the oracle)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from streamwarden.config import PipelineConfig
from streamwarden.local.postgres import LocalPostgres
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks import delta_log
from tests.support import pipeline_config

PASSWORD_ENV = "STREAMWARDEN_TEST_HISTORY_PASSWORD"
#: The history store kinds, each history pipeline test runs against both.
STORES = ("delta", "postgres")


def history_config(
    root: Path,
    store: str,
    postgres: LocalPostgres | None,
    monkeypatch: pytest.MonkeyPatch,
    table: str,
    **sessions: Any,
) -> PipelineConfig:
    """A sessions pipeline under ``root`` whose history store is its Delta sessions table
    (``store = "delta"``, ``[history]`` with nothing but the default kind) or ``table`` of
    ``postgres``."""
    sessions = {"allowed_lateness": "10m", "history_lateness": "3d", **sessions}
    if store == "delta":
        return pipeline_config(
            root,
            name="history-test",
            sessions=sessions,
            history={},
            sinks={"sessions": {"kind": "delta", "path": str(root / "sessions")}},
        )
    assert postgres is not None
    monkeypatch.setenv(PASSWORD_ENV, postgres.password)
    return pipeline_config(
        root,
        sessions=sessions,
        history={
            "kind": "postgres",
            "host": postgres.host,
            "port": postgres.port,
            "database": postgres.database,
            "user": postgres.user,
            "password_env": PASSWORD_ENV,
            "table": table,
        },
    )


def revisions(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    """Every session revision the run wrote: the Parquet output's rows, or, for a Delta table
    that keeps only each session's latest revision, the rows of each of its versions (a row a
    batch wrote is in the version of that batch's commit), each once."""
    sink = config.sinks["sessions"]
    if sink.kind != "delta":
        return read_output(spark, sink.path)
    versions = [c.version for c in delta_log.commits(sink.path)]
    frames = [
        spark.read.format("delta").option("versionAsOf", v).load(str(sink.path)) for v in versions
    ]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union.drop("session_date").dropDuplicates(["session_id", "batch_id"])


def offline_sessions(events: list[tuple[str, int]], gap_ms: int) -> set[tuple[str, int, int, int]]:
    """(user, start_ms, end_ms, pages) of the sessions ``events`` (user, ts_ms) make when all
    are known at once: maximal runs whose consecutive gaps are under ``gap_ms``."""
    by_user: dict[str, list[int]] = defaultdict(list)
    for user, ts in events:
        by_user[user].append(ts)
    out = set()
    for user, times in by_user.items():
        times.sort()
        start = prev = times[0]
        pages = 1
        for t in times[1:]:
            if t - prev >= gap_ms:
                out.add((user, start, prev, pages))
                start, pages = t, 0
            prev = t
            pages += 1
        out.add((user, start, prev, pages))
    return out


def store_connections(postgres: LocalPostgres) -> int:
    """How many connections the server holds under the store's application name."""
    import psycopg

    from streamwarden.history.postgres import APPLICATION_NAME

    with psycopg.connect(postgres.conninfo()) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (APPLICATION_NAME,),
        ).fetchone()
    assert row is not None
    return int(row[0])
