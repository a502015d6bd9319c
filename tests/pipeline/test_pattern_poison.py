"""No record can fail a patterns batch: a stage condition that raises an error on one record
(here a division by zero under Spark's ANSI mode, on page 7 only) makes that record a ``poison``
dead letter naming the stage; the batch completes, the other records still match, and the
patterns accounting balances."""

from __future__ import annotations

from typing import Any

import pytest

from streamwarden.operators.patterns.accounting import account_patterns
from streamwarden.operators.patterns.step import PatternBatchStats
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.support import pageview, pattern_pipeline_config, write_batches

pytestmark = pytest.mark.spark

FAILS_ON_PAGE_7 = "url LIKE '/scan/%' AND 10 / (page_number - 7) <> 0"
PATTERNS = {
    "within": "30m",
    "skip": "skip_past_last_event",
    "fields": ["url"],
    "stages": [
        {"name": "scan", "contiguity": "begin", "where": FAILS_ON_PAGE_7},
        {"name": "again", "where": FAILS_ON_PAGE_7},
    ],
}
RECORDS = [
    pageview("a", 0, url="/scan/h1"),
    pageview("a", 5, page=7, url="/scan/h2"),  # the condition divides by zero
    pageview("a", 10, url="/scan/h3"),
    pageview("b", 0),
]


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"  # else nothing would throw
    root = tmp_path_factory.mktemp("pattern-poison")
    write_batches(root / "landing", [RECORDS])
    config = pattern_pipeline_config(root, PATTERNS)
    result = Pipeline(config, spark).run(once=True, drain=True)
    events = sum(b.events for b in result.batches if isinstance(b, PatternBatchStats))
    outputs = (root / "matches", None, root / "dead_letters")
    return {
        "accounting": account_patterns(spark, outputs, len(RECORDS), events),
        "dead": read_output(spark, root / "dead_letters").collect(),
        "matches": read_output(spark, root / "matches").collect(),
    }


def test_the_record_the_condition_fails_on_is_poison_naming_the_stage(run):
    [dead] = run["dead"]
    assert (dead.reason, dead.key) == ("poison", "a")
    assert '"page_number": 7' in dead.raw
    assert dead.detail.startswith("the condition of stage 'scan' raised an error on this record")


def test_the_poison_detail_names_the_exception_class_and_its_message(run):
    [dead] = run["dead"]
    assert (
        "raised an error on this record: org.apache.spark.SparkArithmeticException: "
        "[DIVIDE_BY_ZERO] Division by zero." in dead.detail
    ), dead.detail
    assert "\n" not in dead.detail  # one line


def test_the_batch_completes_and_the_other_records_still_match(run):
    [match] = run["matches"]
    assert match.key == "a"
    assert [e.url for e in match.events] == ["/scan/h1", "/scan/h3"]


def test_the_patterns_accounting_balances_with_the_poison_record_refused(run):
    accounting = run["accounting"]
    assert accounting.balanced, accounting.describe()
    assert (accounting.events, accounting.refused, accounting.rejected) == (4, 1, 0)
