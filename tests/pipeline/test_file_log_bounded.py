"""The files source's own log (``<checkpoint>/sources/0``) stays bounded: the entries of files
older than ``maxFileAge`` before the newest leave its compact file, Spark restarts from the
pruned log, and no file is read twice or skipped."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from streamwarden.sources.file_log import files_of_batch, latest_compact
from tests.support import pageview, pipeline_config, spark_settings

pytestmark = [pytest.mark.spark, pytest.mark.soak]  # 8 batches and a restart: `make soak`

DAY_S = 86_400
COMPACT = "spark.sql.streaming.fileSource.log.compactInterval"


def _drop(landing: Any, day: int, now: float) -> None:
    """A landing file written ``day`` days into a 12-day span ending now (by its mtime)."""
    path = landing / f"day-{day:02d}.jsonl"
    path.write_text(f"{pageview(f'u{day}', day)}\n{pageview(f'u{day}', day + 0.5)}\n")
    os.utime(path, (now - (12 - day) * DAY_S, now - (12 - day) * DAY_S))


def _listed(log: Any) -> list[str]:
    compact = latest_compact(log)
    assert compact is not None
    lines = compact.read_text().splitlines()[1:]
    return sorted(json.loads(x)["path"].rsplit("/", 1)[1] for x in lines)


def test_old_entries_leave_the_log_and_a_restart_reads_only_new_files(spark, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    now = time.time()
    for day in (0, 2, 4, 6, 8, 10):
        _drop(landing, day, now)
    config = pipeline_config(tmp_path, monitoring={"prometheus_port": "off"})
    with spark_settings(spark, {COMPACT: "2"}):  # a compact file every 2 batches, not 10
        Pipeline(config, spark).run(once=True)
        _drop(landing, 11, now)
        second = Pipeline(config, spark).run(once=True, drain=True)
    read_again = sum(
        int(s["numInputRows"])
        for p in second.progress
        for s in p["sources"]
        if str(landing) in s["description"]
    )
    assert read_again == 2  # the new file's two records: nothing read twice
    # when the second run started, the newest file read was day 10's: days 0 and 2, more than
    # 7 days older, left the compact file (day 4, exactly 7 days older, is kept, as Spark
    # would still take it for new); day 11's entry is in its own batch's file
    log = tmp_path / "checkpoint" / "sources" / "0"
    assert _listed(log) == [f"day-{d:02d}.jsonl" for d in (4, 6, 8, 10)]
    assert [p.rsplit("/", 1)[1] for p in files_of_batch(log, 6)] == ["day-11.jsonl"]
    accounting = account(
        spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 14
    )
    assert accounting.balanced, accounting.describe()
