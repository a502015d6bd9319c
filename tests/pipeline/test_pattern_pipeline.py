"""A pattern pipeline end to end on real Spark, with explicit event times: validated records in,
matches, timed-out partial matches and dead letters out, every record accounted for, no state
left after the drain."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from streamwarden.errors import PatternMissError
from streamwarden.monitoring import read_progress_log
from streamwarden.monitoring.progress_log import progress_dir
from streamwarden.operators.patterns.step import PatternBatchStats
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.support import T0, pageview, pattern_pipeline_config, write_batches

pytestmark = pytest.mark.spark

SCAN = "url LIKE '/scan/%'"
PATTERNS = {
    "within": "30m",
    "skip": "skip_past_last_event",
    "emit_timeouts": True,
    "fields": ["url"],
    "stages": [
        {"name": "scan", "contiguity": "begin", "where": SCAN},
        {
            "name": "other_host",
            "where": SCAN,
            "previous": [{"field": "url", "op": "!=", "stage": "scan"}],
        },
    ],
}


def scan(actor: str, at: float, host: str) -> str:
    return pageview(actor, at, url=f"/scan/{host}")


BATCHES = [
    [
        scan("a", 0, "h1"),
        pageview("a", 5),
        scan("a", 10, "h2"),  # a match
        scan("b", 0, "h1"),
        scan("b", 12, "h1"),  # same host twice: two timeouts
        scan("c", 0, "h1"),
        scan("c", 45, "h2"),  # too far apart: two timeouts
        pageview("d", 0),
        pageview("d", 3, page=2),  # never a scan
        "not json at all",
        json.dumps({"ts": 1, "page_number": 1, "url": "/scan/h1"}),  # no user_id
    ],
    [
        scan("e", 50, "h1"),
        scan("e", 55, "h3"),  # a match in the second batch
        scan("b", 20, "h5"),  # behind the watermark (45m - 1m): too late
        pageview("d", 21, page=9),  # also behind it, but meets no stage: never judged
    ],
]
RECORDS = sum(len(b) for b in BATCHES)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("patterns")
    write_batches(root / "landing", BATCHES)
    config = pattern_pipeline_config(root, PATTERNS)
    result = Pipeline(config, spark).run(once=True, drain=True)
    return root, result


def at(minutes: float) -> datetime:
    """T0 + ``minutes`` as PySpark returns a timestamp: naive, in the local time zone."""
    return datetime.fromtimestamp((T0 + timedelta(minutes=minutes)).timestamp())


def test_matches_are_the_hand_worked_ones_with_their_events(spark, run):
    root, _ = run
    rows = read_output(spark, root / "matches").orderBy("key").collect()
    assert [(r.key, r.match_start, r.match_end) for r in rows] == [
        ("a", at(0), at(10)),
        ("e", at(50), at(55)),
    ]
    assert [(e.stage, e.event_time, e.url) for e in rows[0].events] == [
        ("scan", at(0), "/scan/h1"),
        ("other_host", at(10), "/scan/h2"),
    ]
    assert len({r.match_id for r in rows}) == 2


def test_partial_matches_that_never_complete_time_out_once_each_at_their_deadline(spark, run):
    root, _ = run
    rows = read_output(spark, root / "timeouts").orderBy("key", "match_start").collect()
    assert [(r.key, r.match_start, r.deadline) for r in rows] == [
        ("b", at(0), at(30)),
        ("b", at(12), at(42)),
        ("c", at(0), at(30)),
        ("c", at(45), at(75)),
    ]


def test_validation_rejects_and_too_late_events_are_dead_letters_with_reasons(spark, run):
    root, _ = run
    rows = read_output(spark, root / "dead_letters").orderBy("reason").collect()
    assert [(r.reason, r.key) for r in rows] == [
        ("malformed_json", None),
        ("missing_field", None),
        ("too_late", "b"),
    ]
    late = rows[2]
    assert json.loads(late.raw)["url"] == "/scan/h5"  # the original record
    assert late.event_time == at(20)


def test_every_record_is_accounted_for_in_the_observed_counts(run):
    _, result = run
    stats = [b for b in result.batches if isinstance(b, PatternBatchStats)]
    events = sum(b.events for b in stats)
    dead: dict[str, int] = {}
    for b in stats:
        for reason, n in b.dead_letters.items():
            dead[reason] = dead.get(reason, 0) + n
    assert events == RECORDS - 2  # all but the two validation rejects
    assert dead == {"malformed_json": 1, "missing_field": 1, "too_late": 1}
    assert sum(b.evaluated for b in stats) == events - 1
    assert (sum(b.matches for b in stats), sum(b.timeouts for b in stats)) == (2, 4)


def test_no_state_is_left_once_every_deadline_has_passed(run):
    _, result = run
    last = result.progress[-1]
    assert [op["numRowsTotal"] for op in last["stateOperators"]] == [0]


def test_the_progress_log_records_every_batch_with_its_dead_letters(run):
    root, result = run
    records = read_progress_log(progress_dir(root / "checkpoint") / "progress.jsonl")
    assert [r.summary.batch_id for r in records] == [p["batchId"] for p in result.progress]
    dead: dict[str, int] = {}
    for r in records:
        for reason, n in r.summary.dead_letters.items():
            dead[reason] = dead.get(reason, 0) + n
    assert dead == {"malformed_json": 1, "missing_field": 1, "too_late": 1}


def test_a_skip_that_misses_with_throw_on_miss_stops_the_run_and_is_not_restarted(spark, tmp_path):
    # Flink's AfterMatchSkipITCase.testSkipToFirstNonExistentPosition: b never took an event
    url = "url = '/{}'"
    patterns = {
        "within": "30m",
        "skip": "skip_to_first",
        "skip_stage": "b",
        "skip_throw_on_miss": True,
        "stages": [
            {"name": "a", "contiguity": "begin", "where": url.format("a")},
            {
                "name": "b",
                "contiguity": "next",
                "where": url.format("b"),
                "one_or_more": True,
                "optional": True,
                "consecutive": True,
            },
            {"name": "c", "contiguity": "next", "where": url.format("c")},
        ],
    }
    write_batches(tmp_path / "landing", [[pageview("k", 0, url="/a"), pageview("k", 1, url="/c")]])
    config = pattern_pipeline_config(tmp_path, patterns)
    failures = []

    with pytest.raises(PatternMissError, match=r"skip_to_first\('b'\) with throw_on_miss"):
        Pipeline(config, spark).run(
            once=True, drain=True, supervise=True, on_failure=failures.append
        )

    assert [f.restartable for f in failures] == [False]  # stopped at once, no restart
