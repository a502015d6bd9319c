"""A batch that fails the same way again and again because of one record, outside every catch
of the engine's: the supervisor bisects it, sets that record aside as a ``poison`` dead letter
with the failure, and the pipeline goes on; every other record is output and the accounting
balances."""

from __future__ import annotations

import os
from typing import Any

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, read_output
from streamwarden.pipeline.quarantine import PoisonList
from tests.support import pageview, pipeline_config

pytestmark = [pytest.mark.spark, pytest.mark.soak]

MARKER = "UNCAUGHT-MARKER-51c2"
#: Two files, one batch each; the second holds the record the engine fails on, uncaught.
FIRST = [pageview("u1", m) for m in (0, 1)] + [pageview("u2", 0)]
SECOND = [pageview("u1", 2), pageview("u1", 3, url=f"/{MARKER}"), pageview("u3", 1)] + [
    pageview(f"u{n}", 4) for n in range(4, 9)
]


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bisection")
    (root / "landing").mkdir()
    (root / "landing" / "a.jsonl").write_text("".join(f"{r}\n" for r in FIRST))
    (root / "landing" / "b.jsonl").write_text("".join(f"{r}\n" for r in SECOND))
    os.utime(root / "landing" / "a.jsonl", (1_700_000_000, 1_700_000_000))  # read first
    config = pipeline_config(
        root,
        sessions={"allowed_lateness": "1h"},  # nothing too late, whichever file came first
        supervisor={"initial_backoff": "0s", "max_backoff": "0s", "bisect_after": 2},
        monitoring={"prometheus_port": "off"},
    )
    pipeline = Pipeline(config, spark)
    warnings: list[str] = []
    pipeline.on_warning = warnings.append
    poison = spark._jvm.io.streamwarden.engine.Poison
    poison.failUncaughtOn(MARKER)
    try:
        result = pipeline.run(once=True, drain=True, supervise=True)
    finally:
        poison.failUncaughtOn(None)
    records = len(FIRST) + len(SECOND)
    dead = read_output(spark, config.sinks["dead_letters"].path)
    return {
        "result": result,
        "warnings": warnings,
        "listed": PoisonList(config.checkpoint.path).records(),
        "accounting": account(
            spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, records
        ),
        "dead": [] if dead is None else [row.asDict() for row in dead.collect()],
        "sessions": read_output(spark, config.sinks["sessions"].path),
    }


def test_the_batch_failed_the_same_way_until_bisection_then_the_pipeline_went_on(run):
    failures = run["result"].failures
    assert len(failures) == 2 and failures[0].same_as(failures[1])
    assert failures[0].batch == 1 and MARKER in failures[0].message
    [warning] = run["warnings"]
    assert "found 1 record(s) it fails on" in warning


def test_only_the_record_the_batch_fails_on_is_quarantined_as_poison_with_the_failure(run):
    [dead] = run["dead"]
    assert dead["reason"] == "poison" and MARKER in dead["raw"] and dead["key"] == "u1"
    [listed] = run["listed"]
    assert listed.batch == run["result"].failures[0].batch
    assert f"batch {listed.batch} failed on this record again and again" in dead["detail"]
    assert "InjectedFault" in dead["detail"] and "injected uncaught fault" in dead["detail"]


def test_every_other_record_is_output_and_the_accounting_balances(run):
    assert run["accounting"].balanced, run["accounting"].describe()
    pages = {r["user_id"]: r["event_count"] for r in run["sessions"].collect()}
    assert pages == {"u1": 3, "u2": 1, "u3": 1, **{f"u{n}": 1 for n in range(4, 9)}}
