"""Session semantics on real local Spark, one streaming run with one user per scenario.

Batches are files taken one per micro-batch; a ``clock`` user sets the maximum event time, so
the watermark of each batch is known exactly: (max event time of earlier batches) - 1 minute.
Settings: gap 30m, allowed lateness 45m, max 3 events and 500 bytes per session, pages 1 to 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, final_sessions, read_output
from tests.support import PAGEVIEW_SCHEMA, minutes, pageview, pipeline_config, write_batches

BIG_URL = "/" + "x" * 300

T1 = minutes(1)
MALFORMED = {
    "malformed_json": '{"user_id": "m1", "ts": 1',
    "missing_field": json.dumps({"ts": T1, "page_number": 1}),
    "wrong_type": json.dumps({"user_id": "m3", "ts": T1, "page_number": "one"}),
    "invalid_timestamp": json.dumps({"user_id": "m4", "ts": 2**62, "page_number": 1}),
    "invalid_key": json.dumps({"user_id": "", "ts": T1, "page_number": 1}),
    "out_of_range": json.dumps({"user_id": "m7", "ts": T1, "page_number": 4}),
    "timestamp_in_future": json.dumps({"user_id": "m8", "ts": 4102444800000, "page_number": 1}),
    "record_too_large": json.dumps(
        {"user_id": "m9", "ts": T1, "page_number": 1, "url": "y" * 1200}
    ),
}

#: Starts with NUL, as the engine's control keys do.
NUL_USER = json.dumps({"user_id": "\u0000x", "ts": T1, "page_number": 1})
#: A pageview that carries the field of the idle ticker's records: an event all the same.
TICK_LOOKALIKE = json.dumps(
    {"user_id": "tickish", "ts": minutes(2), "page_number": 1, "streamwarden_tick_ms": minutes(500)}
)

BATCHES = [
    [  # batch 0, watermark: none yet
        pageview("gap_under", 0),
        pageview("gap_under", 30 - 1 / 60000),
        pageview("gap_exact", 0),
        pageview("gap_exact", 30),
        pageview("gap_over", 0),
        pageview("gap_over", 30 + 1 / 60000),
        pageview("ooo", 10, 2),
        pageview("ooo", 5, 1),
        pageview("ooo", 12, 3),
        pageview("ooo2", 35, 2),
        pageview("late", 0),
        pageview("bridge", 0),
        pageview("bridge", 31),
        pageview("too_late", 0),
        *(pageview("page_cap", m) for m in (0, 1, 2, 3)),
        pageview("byte_cap", 0, url=BIG_URL),
        pageview("byte_cap", 1, url=BIG_URL),
        *MALFORMED.values(),
        NUL_USER,
        TICK_LOOKALIKE,
        pageview("clock0", 35),
    ],
    [pageview("ooo2", 34.5, 1), pageview("clock1", 40)],  # watermark 34m
    [pageview("late", 1), pageview("late", 3), pageview("clock2", 65)],  # watermark 39m
    [pageview("clock3", 70)],  # watermark 64m
    [pageview("bridge", 15), pageview("clock4", 200)],  # watermark 69m
    # watermark 199m: 150 alone is past the allowed lateness, but 175 and 201 of the same batch
    # open a session it reaches
    [pageview("too_late", 10), *(pageview("chain", m, page=1) for m in (201, 150, 175))],
]
RECORDS = sum(len(b) for b in BATCHES)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = Path(tmp_path_factory.mktemp("scenarios"))
    write_batches(root / "landing", BATCHES)
    config = pipeline_config(
        root,
        schema={**PAGEVIEW_SCHEMA, "checks": {"page_number": {"min": 1, "max": 3}}},
        sessions={"allowed_lateness": "45m", "max_session_bytes": 500, "max_events": 3},
        validation={"max_record_bytes": 1000},
    )
    result = Pipeline(config, spark).run(once=True, drain=True)
    revisions = read_output(spark, config.sinks["sessions"].path)
    dead = read_output(spark, config.sinks["dead_letters"].path)
    return {
        "config": config,
        "result": result,
        "revisions": revisions.collect(),
        "final": final_sessions(revisions).collect(),
        "dead": dead.collect(),
    }


def user_sessions(run, user):
    return sorted(
        (r for r in run["final"] if r["user_id"] == user), key=lambda r: r["session_start"]
    )


def user_revisions(run, user):
    return sorted(
        (r for r in run["revisions"] if r["user_id"] == user),
        key=lambda r: (r["session_start"], r["revision"]),
    )


@pytest.mark.parametrize(("user", "count"), [("gap_under", 1), ("gap_exact", 2), ("gap_over", 2)])
def test_sessions_split_exactly_when_a_gap_reaches_the_session_gap(run, user, count):
    assert len(user_sessions(run, user)) == count


def test_out_of_order_events_within_a_batch_form_one_ordered_session(run):
    [s] = user_sessions(run, "ooo")
    assert (s["event_count"], s["first_url"], s["last_url"]) == (3, "/p/1", "/p/3")


def test_out_of_order_events_across_batches_within_the_watermark_join_their_session(run):
    [s] = user_sessions(run, "ooo2")
    assert (s["event_count"], s["first_url"], s["revision"]) == (2, "/p/1", 0)


def test_late_events_update_a_closed_session_with_one_revision_and_no_duplicates(run):
    revisions = user_revisions(run, "late")
    assert [(r["revision"], r["event_count"]) for r in revisions] == [(0, 1), (1, 3)]
    assert len({r["session_id"] for r in revisions}) == 1


def test_a_late_event_bridging_two_emitted_sessions_merges_them(run):
    revisions = user_revisions(run, "bridge")
    a, b = sorted((r for r in revisions if r["revision"] == 0), key=lambda r: r["session_start"])
    [merged] = [r for r in revisions if r["revision"] == 1]
    assert (a["revision"], b["revision"]) == (0, 0)
    assert (merged["session_id"], merged["revision"], merged["event_count"]) == (
        a["session_id"],
        1,
        3,
    )
    assert merged["merged_session_ids"] == [b["session_id"]]
    assert [s["session_id"] for s in user_sessions(run, "bridge")] == [a["session_id"]]


def test_an_event_beyond_the_allowed_lateness_is_dead_lettered_as_too_late(run):
    [d] = [d for d in run["dead"] if d["key"] == "too_late"]
    assert d["reason"] == "too_late" and '"too_late"' in d["raw"]
    assert [s["event_count"] for s in user_sessions(run, "too_late")] == [1]


def test_the_event_cap_dead_letters_further_events_and_truncates_the_session(run):
    [s] = user_sessions(run, "page_cap")
    assert (s["event_count"], s["truncated"]) == (3, True)
    assert [d["reason"] for d in run["dead"] if d["key"] == "page_cap"] == ["session_event_cap"]


def test_the_byte_cap_dead_letters_further_events_and_truncates_the_session(run):
    [s] = user_sessions(run, "byte_cap")
    assert (s["event_count"], s["truncated"]) == (1, True)
    assert [d["reason"] for d in run["dead"] if d["key"] == "byte_cap"] == ["session_byte_cap"]


@pytest.mark.parametrize("reason", sorted(MALFORMED))
def test_each_class_of_bad_record_is_dead_lettered_with_its_reason_and_raw_record(run, reason):
    [d] = [d for d in run["dead"] if d["raw"] == MALFORMED[reason]]
    assert d["reason"] == reason and d["detail"]
    assert d["ingest_time"] is not None


def test_a_key_starting_with_nul_is_dead_lettered_not_lost(run):
    [d] = [d for d in run["dead"] if d["raw"] == NUL_USER]
    assert d["reason"] == "invalid_key" and "NUL" in d["detail"]


def test_a_landing_record_with_the_tick_field_is_an_ordinary_event(run):
    [s] = user_sessions(run, "tickish")
    assert (s["event_count"], s["session_start"]) == (1, s["session_end"])
    assert int(s["session_start"].timestamp() * 1000) == minutes(2)


def test_a_too_late_event_joins_the_session_later_events_of_its_batch_open(run):
    [s] = user_sessions(run, "chain")
    assert s["event_count"] == 3
    assert int(s["session_start"].timestamp() * 1000) == minutes(150)
    assert [d for d in run["dead"] if d["key"] == "chain"] == []


def test_every_record_is_in_exactly_one_session_or_dead_letter(spark, run):
    cfg = run["config"]
    accounting = account(spark, cfg.sinks["sessions"].path, cfg.sinks["dead_letters"].path, RECORDS)
    assert accounting.balanced, accounting.describe()
    assert accounting.dead_letters["too_late"] == 1


def test_after_draining_no_state_is_left(run):
    last = run["result"].progress[-1]
    assert [op["numRowsTotal"] for op in last["stateOperators"]] == [0]
