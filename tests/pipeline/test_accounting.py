"""Every generated record ends up in exactly one place: a session, or a dead letter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, read_output
from streamwarden.sources.generator import TrafficSpec, generate_traffic
from streamwarden.validation import Reason
from tests.support import pipeline_config

SPEC = TrafficSpec(
    users=300,
    events=12_000,
    rate_per_second=0.5,
    events_per_file=1_000,
    late_fraction=0.03,
    late_delay=(timedelta(minutes=45), timedelta(minutes=70)),
    too_late_fraction=0.01,
    too_late_delay=timedelta(hours=2),
    malformed_fraction=0.02,
)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("accounting")
    summary = generate_traffic(SPEC, root / "landing")
    config = pipeline_config(root, sessions={"allowed_lateness": "45m"})
    Pipeline(config, spark).run(once=True, drain=True)
    accounting = account(
        spark, config.sinks.sessions.path, config.sinks.dead_letters.path, summary.records
    )
    return summary, accounting, read_output(spark, config.sinks.sessions.path)


def test_records_in_equal_events_in_sessions_plus_dead_letters(run):
    summary, accounting, _ = run
    assert summary.records == 12_000
    assert accounting.balanced, accounting.describe()


def test_each_malformed_record_is_dead_lettered_with_the_reason_it_was_made_for(run):
    summary, accounting, _ = run
    engine_reasons = {Reason.TOO_LATE, Reason.SESSION_PAGE_CAP, Reason.SESSION_BYTE_CAP}
    validation = {k: v for k, v in accounting.dead_letters.items() if k not in engine_reasons}
    assert validation == dict(summary.malformed)


def test_events_hours_late_are_dead_lettered_as_too_late_and_counted(run):
    """Records sent two hours late, with 45 minutes of allowed lateness. A few may still join
    a session legitimately (one a late record of the same user re-opened within the lateness
    horizon), so the check is that nearly all are too late, none is lost (the accounting
    balances) and no on-time record is called too late."""
    summary, accounting, _ = run
    assert summary.too_late > 0
    too_late = accounting.dead_letters[Reason.TOO_LATE]
    assert summary.too_late * 0.9 <= too_late <= summary.too_late


def test_late_events_within_the_lateness_update_sessions_instead_of_being_lost(run):
    _, _, revisions = run
    assert revisions.where("revision > 0").count() > 0
