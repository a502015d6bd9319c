"""Helpers for the history tests: a pipeline config with a PostgreSQL history store of the
test session's server, and sessions computed offline from all events (the oracle)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from streamwarden.config import PipelineConfig
from streamwarden.history.local_postgres import LocalPostgres
from tests.support import pipeline_config

PASSWORD_ENV = "STREAMWARDEN_TEST_HISTORY_PASSWORD"


def history_config(
    root: Path,
    postgres: LocalPostgres,
    monkeypatch: pytest.MonkeyPatch,
    table: str,
    **sessions: Any,
) -> PipelineConfig:
    """A sessions pipeline under ``root`` whose history store is ``table`` of ``postgres``."""
    monkeypatch.setenv(PASSWORD_ENV, postgres.password)
    return pipeline_config(
        root,
        sessions={"allowed_lateness": "10m", "history_lateness": "3d", **sessions},
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
