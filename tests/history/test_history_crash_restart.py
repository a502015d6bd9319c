"""A sessions pipeline with a PostgreSQL history store, run as ``streamwarden run --once
--drain`` in its own process group and killed with SIGKILL (the whole group, the JVM too)
around the store's write, then restarted on its checkpoint until it completes. Its outputs and
its store equal those of an uninterrupted run, and no batch was applied twice: the store's
ledger holds each batch once, with the rows the uninterrupted run's merge produced for it.

The kill points, each watched by polling (a condition with a deadline, never a sleep):

- ``mid-write``: a transaction of the run's connection has written to the store and not yet
  committed (PostgreSQL gives it a transaction id); PostgreSQL rolls it back;
- ``store-first``: the store's ledger holds a batch whose Spark commit is not written yet (the
  store committed, Spark did not): the restart replays that batch, which must take the rows
  from the ledger, not merge again;
- ``checkpointed``: right after Spark committed a later batch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from streamwarden.config import load_config
from streamwarden.pipeline import Pipeline
from streamwarden.testing.late_traffic import write_late_traffic
from tests.history.support import PASSWORD_ENV
from tests.pipeline.faults import outputs
from tests.support import run_command

pytestmark = pytest.mark.soak  # a JVM start per kill: minutes on a shared machine

CONFIG_TOML = """
name = "history-crash"
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
[source]
path = "landing"
max_files_per_trigger = 1
[sessions]
gap = "30m"
allowed_lateness = "10m"
history_lateness = "3d"
[sessions.aggregates]
pages = "count()"
total_pages = "sum(page_number)"
urls = "collect_list(url)"
[history]
kind = "postgres"
host = "127.0.0.1"
port = {port}
database = "{database}"
user = "{user}"
password_env = "{password_env}"
table = "{table}"
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""


def prepare(root: Path, postgres, table: str) -> Path:
    write_late_traffic(root / "landing", users=40, days=2)
    config = root / "pipeline.toml"
    config.write_text(
        CONFIG_TOML.format(
            port=postgres.port,
            database=postgres.database,
            user=postgres.user,
            password_env=PASSWORD_ENV,
            table=table,
        )
    )
    return config


def spark_committed(root: Path) -> set[int]:
    commits = root / "checkpoint" / "commits"
    if not commits.is_dir():
        return set()
    return {int(p.name) for p in commits.iterdir() if p.name.isdigit()}


class Store:
    """Reads the store's tables from outside the run (autocommit: each query sees the latest
    committed state)."""

    def __init__(self, postgres, table: str) -> None:
        self.db = psycopg.connect(postgres.conninfo(), autocommit=True)
        self.table = table

    def ledger(self) -> list[tuple[int, object]]:
        """The batches the store applied, with their output (none before the run opened it)."""
        try:
            return self.db.execute(
                f"SELECT batch_id, output FROM {self.table}_batches ORDER BY batch_id"
            ).fetchall()
        except psycopg.errors.UndefinedTable:
            return []

    def sessions(self) -> set[tuple[object, ...]]:
        rows = self.db.execute(f"SELECT * FROM {self.table}").fetchall()
        return {tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in rows}

    def writing(self) -> bool:
        """Whether another connection has an open transaction that wrote to the database."""
        row = self.db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
            "AND pid <> pg_backend_pid() AND datname = current_database()"
        ).fetchone()
        return bool(row and row[0])


def kill_when(command: list[str], cwd: Path, condition: Callable[[], bool]) -> bool:
    """Starts ``command`` in its own process group and SIGKILLs the group once ``condition``
    holds; False if the run ended first."""
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 900
    try:
        while not condition():
            if process.poll() is not None:
                return False
            assert time.monotonic() < deadline, "the kill point never came"
            time.sleep(0.001)  # polling a condition, not waiting for a guess at timing
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    return process.returncode == -signal.SIGKILL


def test_killed_around_the_store_write_it_resumes_to_the_uninterrupted_outputs_and_store(
    spark, postgres, workdir, monkeypatch
):
    monkeypatch.setenv(PASSWORD_ENV, postgres.password)
    reference, crashed = workdir / "reference", workdir / "crashed"
    Pipeline(load_config(prepare(reference, postgres, "crash_reference")), spark).run(
        once=True, drain=True
    )
    command = run_command(prepare(crashed, postgres, "crash_crashed"), "--once", "--drain")
    expected, store = Store(postgres, "crash_reference"), Store(postgres, "crash_crashed")
    kills: list[str] = []
    replayed: list[int] = []

    def mid_write() -> bool:
        return len(store.ledger()) >= 3 and store.writing()

    def store_first() -> bool:
        ahead = {b for b, _ in store.ledger()} - spark_committed(crashed)
        if len(store.ledger()) >= 6 and ahead:
            replayed.extend(ahead)
            return True
        return False

    def checkpointed() -> bool:
        return max(spark_committed(crashed), default=-1) >= 12

    for name, point in (("mid-write", mid_write), ("store-first", store_first),
                        ("checkpointed", checkpointed)):  # fmt: skip
        if kill_when(command, crashed, point):
            kills.append(name)
    final = subprocess.run(command, cwd=crashed, capture_output=True, text=True, check=False)
    assert final.returncode == 0, final.stderr
    print(f"\nkills: {kills}; batches the store held before Spark's commit: {replayed}")

    assert kills == ["mid-write", "store-first", "checkpointed"]
    assert replayed  # a batch the store had applied was replayed after the restart
    for name, rows in outputs(spark, reference, "sessions").items():
        got = outputs(spark, crashed, "sessions")[name]
        lost, doubled = rows - got, got - rows
        assert not lost and not doubled, f"{name}: {sum(lost.values())} lost, " \
                                         f"{sum(doubled.values())} doubled or extra"  # fmt: skip
    assert store.sessions() == expected.sessions()
    ledger = store.ledger()
    assert Counter(b for b, _ in ledger) == Counter(b for b, _ in expected.ledger())  # each once
    assert [sorted(map(str, o)) for _, o in ledger] == [
        sorted(map(str, o)) for _, o in expected.ledger()
    ]  # the replayed batch's rows are those the uninterrupted run's merge made
