"""Shared fixtures: one local SparkSession for the whole test session (with Spark's Kafka
connector and Delta Lake on its classpath, and Delta's extension), one local Kafka broker
started only if a test asks for it, fast scratch folders."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamwarden.kafka.jars import connector_jars
from streamwarden.local.broker import LocalBroker
from streamwarden.local.postgres import LocalPostgres
from streamwarden.spark.delta import SNAPSHOT_PARTITIONS, delta_jars, delta_session_conf
from streamwarden.spark.session import build_spark_session

#: Real checkpoints (sessions, leaking aggregation) shared by tests/checkpoints and tests/cli.
pytest_plugins = ["tests.checkpoint_fixtures"]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    # Python workers (a test's Python transformWithState) must run this venv's Python: PySpark
    # reads PYSPARK_PYTHON when the context starts, else runs whatever "python3" is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = build_spark_session(
        app_name="streamwarden-tests",
        shuffle_partitions=2,
        extra_conf={
            "spark.ui.enabled": "false",
            "spark.sql.streaming.minBatchesToRetain": "20",
            # static settings: Delta's extension and catalog must be there from the start
            **delta_session_conf("local[2]", 2),
            SNAPSHOT_PARTITIONS: "1",
        },
        # spark.jars is fixed once the session starts, and every test shares this one session
        extra_jars=(*connector_jars(), *delta_jars()),
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[LocalBroker]:
    """One real single-node Kafka broker for the whole test session, started the first time a
    test asks for it (a run without Kafka tests starts none) and stopped at the end. Tests share
    it, so each uses topics of its own names. Besides its plain listener, it takes SASL/PLAIN
    logins of one user (``tests.kafka.support.SASL_USER``) on ``broker.sasl_servers``."""
    from tests.kafka.support import SASL_PASSWORD, SASL_USER

    with LocalBroker(sasl_users={SASL_USER: SASL_PASSWORD}) as broker:
        yield broker


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """One real throwaway PostgreSQL server for the whole test session, started the first time
    a test asks for it and stopped (by its PID) at the end. Tests share it, so each uses tables
    of its own names."""
    with LocalPostgres() as server:
        yield server


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A scratch folder in memory where available: checkpoints fsync a lot, tmpfs is cheap."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="streamwarden-", dir=base) as path:
        yield Path(path)
