"""Helpers for the history tests: payments (an account's card payments: ``account``, ``at``,
``amount``, ``merchant``) with three aggregates, a pipeline config with either history store
(the Delta sessions table, or a table of the test session's PostgreSQL server), reading back
every revision a run wrote, and sessions computed offline from all events (the oracle)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from streamwarden.config import PipelineConfig
from streamwarden.local.postgres import LocalPostgres
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks import delta_log
from tests.support import minutes, pipeline_config

PASSWORD_ENV = "STREAMWARDEN_TEST_HISTORY_PASSWORD"
#: The history store kinds, each history pipeline test runs against both.
STORES = ("delta", "postgres")

PAYMENTS = {
    "key": "account",
    "time": "at",
    "fields": "account STRING, at TIMESTAMP, amount DOUBLE, merchant STRING",
}
PAYMENT_AGGREGATES = {
    "total": "sum(amount)",
    "merchants": "count_distinct(merchant)",
    "first_merchant": "first(merchant)",
}


def payment(account: str, at_minutes: float, amount: float, merchant: str) -> str:
    """One payment record, ``at_minutes`` after T0."""
    at = datetime.fromtimestamp(minutes(at_minutes) / 1000, tz=UTC)
    return json.dumps(
        {"account": account, "at": at.isoformat(), "amount": amount, "merchant": merchant}
    )


def history_config(
    root: Path,
    store: str,
    postgres: LocalPostgres | None,
    monkeypatch: pytest.MonkeyPatch | None,
    table: str,
    *,
    schema: dict[str, Any] = PAYMENTS,
    aggregates: dict[str, str] = PAYMENT_AGGREGATES,
    **sessions: Any,
) -> PipelineConfig:
    """A sessions pipeline of ``schema`` (payments by default) with ``aggregates`` under
    ``root``, whose history store is its Delta sessions table (``store = "delta"``,
    ``[history]`` with nothing but the default kind) or ``table`` of ``postgres``."""
    sessions = {
        "allowed_lateness": "10m",
        "history_lateness": "3d",
        "aggregates": aggregates,
        **sessions,
    }
    if store == "delta":
        return pipeline_config(
            root,
            name="history-test",
            schema=schema,
            sessions=sessions,
            history={},
            sinks={"sessions": {"kind": "delta", "path": str(root / "sessions")}},
        )
    assert postgres is not None and monkeypatch is not None
    monkeypatch.setenv(PASSWORD_ENV, postgres.password)
    return pipeline_config(
        root,
        schema=schema,
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


def offline_groups(events: Sequence[tuple[Any, ...]], gap_ms: int) -> list[list[tuple[Any, ...]]]:
    """The sessions ``events`` ((key, ts_ms, ...) each) make when all are known at once, each
    as its events in time order: maximal runs whose consecutive gaps are under ``gap_ms``."""
    by_key: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for e in events:
        by_key[e[0]].append(e)
    out = []
    for evs in by_key.values():
        evs.sort(key=lambda e: e[1])
        group = [evs[0]]
        for e in evs[1:]:
            if e[1] - group[-1][1] >= gap_ms:
                out.append(group)
                group = []
            group.append(e)
        out.append(group)
    return out


def offline_sessions(
    events: Sequence[tuple[Any, ...]], gap_ms: int
) -> set[tuple[str, int, int, int]]:
    """(key, start_ms, end_ms, events) of the sessions ``events`` make (:func:`offline_groups`)."""
    return {(g[0][0], g[0][1], g[-1][1], len(g)) for g in offline_groups(events, gap_ms)}


def offline_payments(lines: Sequence[str], gap_ms: int) -> set[tuple[Any, ...]]:
    """(account, start_ms, end_ms, events, total, merchants, first_merchant) of the sessions the
    payment records ``lines`` make when all are known at once."""
    events = []
    for line in lines:
        p = json.loads(line)
        at = int(datetime.fromisoformat(p["at"]).timestamp() * 1000)
        events.append((p["account"], at, p["amount"], p["merchant"]))
    return {
        (g[0][0], g[0][1], g[-1][1], len(g), sum(e[2] for e in g), len({e[3] for e in g}),
         g[0][3])
        for g in offline_groups(events, gap_ms)
    }  # fmt: skip


def described_payments(rows: Sequence[Any]) -> set[tuple[Any, ...]]:
    """The sessions ``rows`` (of the sessions output, or a store's) as :func:`offline_payments`
    describes them."""

    def ms(ts: datetime) -> int:
        return int(ts.timestamp() * 1000)

    return {
        (r["account"], ms(r["session_start"]), ms(r["session_end"]), r["event_count"],
         r["total"], r["merchants"], r["first_merchant"])
        for r in rows
    }  # fmt: skip


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
