"""Helpers shared by tests: landing files with explicit order, configs, output readers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from streamwarden.config import PipelineConfig, parse_config

#: The schema of :func:`pageview` records, as most pipeline tests declare it.
PAGEVIEW_SCHEMA: dict[str, Any] = {
    "key": "user_id",
    "time": "ts",
    "fields": "user_id STRING, ts BIGINT, page_number INT, url STRING",
    "required": ["page_number"],
    "checks": {"page_number": {"min": 1, "max": 300}},
}
#: :data:`PAGEVIEW_SCHEMA` and :data:`PAGEVIEW_AGGREGATES` as the TOML of a config file.
PAGEVIEW_TOML = """
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
required = ["page_number"]
[schema.checks.page_number]
min = 1
max = 300
"""
#: The sessions' first and last url, as a config file declares them.
PAGEVIEW_AGGREGATES_TOML = """
[sessions.aggregates]
first_url = "first(url)"
last_url = "last(url)"
"""
#: Each session's first and last url, as the pageview tests read them.
PAGEVIEW_AGGREGATES = {"first_url": "first(url)", "last_url": "last(url)"}

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T0_MS = 1767225600000


@contextmanager
def spark_settings(spark: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """The shared test session with ``settings`` for the ``with`` block, then its own values back
    (unset if it had none): the tests after this one see the session as conftest built it."""
    before = {name: spark.conf.get(name, None) for name in settings}
    for name, value in settings.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, value)


def minutes(m: float) -> int:
    """Epoch milliseconds of T0 + ``m`` minutes."""
    return T0_MS + int(timedelta(minutes=m).total_seconds() * 1000)


def pageview(user: str, at_minutes: float, page: int = 1, url: str | None = None) -> str:
    return json.dumps(
        {
            "user_id": user,
            "ts": minutes(at_minutes),
            "page_number": page,
            "url": url or f"/p/{page}",
        }
    )


def write_batches(landing: Path, batches: list[list[str]], *, first_index: int = 0) -> None:
    """One file per batch, with strictly increasing modification times so that a stream with
    ``max_files_per_trigger = 1`` takes exactly one file per micro-batch, in this order."""
    landing.mkdir(parents=True, exist_ok=True)
    for i, lines in enumerate(batches, start=first_index):
        path = landing / f"batch-{i:04d}.jsonl"
        tmp = landing / f".{path.name}.tmp"
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.utime(tmp, (1_700_000_000 + i, 1_700_000_000 + i))
        tmp.rename(path)


def pipeline_config(root: Path, **sections: Any) -> PipelineConfig:
    """A pipeline of pageviews (:data:`PAGEVIEW_SCHEMA`) over ``root/landing`` writing under
    ``root``; ``sections`` override parts (``schema`` replaces the whole schema)."""
    data: dict[str, Any] = {
        "sessions": {"aggregates": PAGEVIEW_AGGREGATES},
        "source": {"path": str(root / "landing"), "max_files_per_trigger": 1},
        "sinks": {
            "sessions": {"path": str(root / "sessions")},
            "dead_letters": {"path": str(root / "dead_letters")},
        },
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
    }
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    data["schema"] = sections.get("schema", PAGEVIEW_SCHEMA)
    return parse_config(data, origin="test")


def pattern_pipeline_config(
    root: Path, patterns: dict[str, Any], **sections: Any
) -> PipelineConfig:
    """A patterns pipeline over ``root/landing`` writing matches, timeouts (when
    ``emit_timeouts``) and dead letters under ``root``."""
    sinks = {"matches": {"path": str(root / "matches")}}
    if patterns.get("emit_timeouts"):
        sinks["timeouts"] = {"path": str(root / "timeouts")}
    data: dict[str, Any] = {
        "name": "patterns-test",
        "operator": "patterns",
        "schema": PAGEVIEW_SCHEMA,
        "source": {"path": str(root / "landing"), "max_files_per_trigger": 1},
        "patterns": patterns,
        "sinks": {**sinks, "dead_letters": {"path": str(root / "dead_letters")}},
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
        **sections,
    }
    return parse_config(data, origin="test")


def process_pipeline_config(
    root: Path, processor: str = "tests.operators.processors:PageCounter", **sections: Any
) -> PipelineConfig:
    """A keyed-processor pipeline of pageviews over ``root/landing``, writing its output and
    dead letters under ``root``."""
    data: dict[str, Any] = {
        "name": "process-test",
        "operator": "process",
        "schema": PAGEVIEW_SCHEMA,
        "source": {"path": str(root / "landing"), "max_files_per_trigger": 1},
        "process": {"processor": processor, **sections.pop("process", {})},
        "sinks": {
            "output": {"path": str(root / "output")},
            "dead_letters": {"path": str(root / "dead_letters")},
        },
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
        **sections,
    }
    return parse_config(data, origin="test")


#: Card payments, as the windows tests declare them.
PAYMENTS_SCHEMA: dict[str, Any] = {
    "key": "account",
    "time": "at",
    "fields": "account STRING, merchant STRING, at BIGINT, amount DOUBLE",
}


def windows_pipeline_config(root: Path, **windows: Any) -> PipelineConfig:
    """A windows pipeline of payments (:data:`PAYMENTS_SCHEMA`) over ``root/landing``, one
    minute per window by merchant unless ``windows`` says otherwise, writing its windows and
    dead letters under ``root``."""
    data: dict[str, Any] = {
        "name": "windows-test",
        "operator": "windows",
        "schema": PAYMENTS_SCHEMA,
        "source": {"path": str(root / "landing"), "max_files_per_trigger": 1},
        "windows": {"size": "1m", "by": ["merchant"], **windows},
        "sinks": {
            "windows": {"path": str(root / "windows")},
            "dead_letters": {"path": str(root / "dead_letters")},
        },
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
    }
    return parse_config(data, origin="test")


def join_pipeline_config(root: Path, **join: Any) -> PipelineConfig:
    """A join of payments with refunds (both :data:`PAYMENTS_SCHEMA`-like) over
    ``root/payments`` and ``root/refunds``, writing joined rows and dead letters under
    ``root``."""
    for name in ("payments", "refunds"):
        (root / name).mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "name": "join-test",
        "operator": "join",
        "sources": {
            name: {"path": str(root / name), "max_files_per_trigger": 1}
            for name in ("payments", "refunds")
        },
        "schemas": {"payments": PAYMENTS_SCHEMA, "refunds": PAYMENTS_SCHEMA},
        "join": {
            "left": "payments",
            "right": "refunds",
            "on": [["account", "account"]],
            "between": ["0s", "1h"],
            **join,
        },
        "sinks": {
            "joined": {"path": str(root / "joined")},
            "dead_letters": {"path": str(root / "dead_letters")},
        },
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
    }
    return parse_config(data, origin="test")


def run_command(config: Path, *flags: str) -> list[str]:
    """``streamwarden run CONFIG FLAGS`` as a subprocess command line."""
    return [sys.executable, "-m", "streamwarden.cli.main", "run", str(config), *flags]


def wait_for(path: Path, process: subprocess.Popen[bytes], timeout_s: float = 600) -> None:
    """Polls for ``path`` to appear (a condition, not a guess at timing)."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert process.poll() is None, "the pipeline ended before it could be killed"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def kill_when_written(command: list[str], marker: Path) -> None:
    """Starts ``command`` and kills it with SIGKILL as soon as ``marker`` appears."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(marker, process)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL


def progress_of(batch: int, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """A batch's progress as Spark's listener hands it over, with these sources (no Spark)."""
    return {
        "id": "q",
        "name": "q",
        "batchId": batch,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "numInputRows": sum(s["numInputRows"] for s in sources),
        "sources": sources,
    }


def kafka_source(
    start: dict[str, int], end: dict[str, int], latest: dict[str, int], rows: int
) -> dict[str, Any]:
    """A Kafka source of topic ``pageviews`` in a progress: offsets per partition."""
    # Spark writes these offsets as JSON text in a progress; parsed ones are read the same way
    return {
        "description": "KafkaV2[Subscribe[pageviews]]",
        "startOffset": json.dumps({"pageviews": start}),
        "endOffset": {"pageviews": end},
        "latestOffset": json.dumps({"pageviews": latest}),
        "numInputRows": rows,
    }
