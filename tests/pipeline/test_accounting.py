"""Every generated record ends up in exactly one place: a session, or a dead letter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.monitoring import progress_dir, read_progress_log
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import Accounting, account, read_output
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
    progress_log = progress_dir(config.checkpoint.path) / "progress.jsonl"
    accounting = account(
        spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, summary.records
    )
    return summary, accounting, read_output(spark, config.sinks["sessions"].path), progress_log


def test_records_in_equal_events_in_sessions_plus_dead_letters(run):
    summary, accounting, _, _ = run
    assert summary.records == 12_000
    assert accounting.balanced, accounting.describe()


def test_each_malformed_record_is_dead_lettered_with_the_reason_it_was_made_for(run):
    summary, accounting, _, _ = run
    engine_reasons = {Reason.TOO_LATE, Reason.SESSION_EVENT_CAP, Reason.SESSION_BYTE_CAP}
    validation = {k: v for k, v in accounting.dead_letters.items() if k not in engine_reasons}
    assert validation == dict(summary.malformed)


def test_events_hours_late_are_dead_lettered_as_too_late_and_counted(run):
    """Records sent two hours late, with 45 minutes of allowed lateness. A few may still join
    a session legitimately (one a late record of the same user re-opened within the lateness
    horizon), so the check is that nearly all are too late, none is lost (the accounting
    balances) and no on-time record is called too late."""
    summary, accounting, _, _ = run
    assert summary.too_late > 0
    too_late = accounting.dead_letters[Reason.TOO_LATE]
    assert summary.too_late * 0.9 <= too_late <= summary.too_late


def test_late_events_within_the_lateness_update_sessions_instead_of_being_lost(run):
    _, _, revisions, _ = run
    assert revisions.where("revision > 0").count() > 0


def test_the_progress_log_counts_every_dead_letter_by_reason(run):
    """The monitor's per-batch counts (from the query's observed metrics) add up to the
    dead-letter output, reason by reason."""
    _, accounting, _, progress_log = run
    totals: dict[str, int] = {}
    for record in read_progress_log(progress_log):
        for reason, count in record.summary.dead_letters.items():
            totals[reason] = totals.get(reason, 0) + count
    assert totals == {str(k): v for k, v in accounting.dead_letters.items() if v}


def test_the_accounting_line_puts_each_number_after_its_label():
    accounting = Accounting(3_000, 2_972, 405, {"too_late": 20, "malformed_json": 8})
    assert accounting.describe() == (
        "records in 3000 = events 2972 in 405 sessions + dead letters 28 "
        "(malformed_json=8, too_late=20): balanced"
    )
