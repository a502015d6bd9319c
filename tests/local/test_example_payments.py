"""The payments example's generator: deterministic, and its summary is the truth by
construction: each hostile record has exactly the one fault it names under
``examples/payments.toml``, each bridge merges two sessions that were both written before it
arrived, each late payment revises a written session still kept, each too-late one finds none."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from streamwarden.local.examples.landing import watermarks
from streamwarden.local.examples.payments import Payment, PaymentsSpec, generate_payments
from streamwarden.local.examples.sessions import TrueSession, gap_sessions
from tests.local.example_records import Reference, example

SPEC = PaymentsSpec()
GAP_MS = SPEC.ms(SPEC.gap)
KEEP_MS = GAP_MS + SPEC.ms(SPEC.allowed_lateness)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    landing = tmp_path_factory.mktemp("payments")
    return generate_payments(SPEC, landing), landing


@pytest.fixture(scope="module")
def layout(written):
    """Per file: the valid payments' (account, time); and the watermark each file is read
    under (every valid payment counted: the late ones are all behind the running maximum)."""
    summary, _ = written
    hostile = {(h.file, h.line) for h in summary.hostile}
    files = []
    for path in summary.files:
        lines = path.read_bytes().splitlines()
        files.append(
            [
                (record["account"], _ms(record["at"]))
                for number, line in enumerate(lines, start=1)
                if (path.name, number) not in hostile and (record := json.loads(line))
            ]
        )
    marks = watermarks([[t for _, t in f] for f in files], SPEC.max_out_of_orderness)
    return files, marks


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def where(layout, payment: Payment) -> int:
    files, _ = layout
    [k] = [k for k, f in enumerate(files) if (payment.account, payment.at_ms) in f]
    return k


def on_time_sessions(summary) -> list[TrueSession]:
    late = {b.payment for b in summary.bridges} | set(summary.late) | set(summary.too_late)
    return gap_sessions([(p.account, p.at_ms) for p in summary.payments if p not in late], SPEC.gap)


def session_at(sessions: list[TrueSession], account: str, ms: int) -> TrueSession:
    """The session of ``account`` that ``ms`` falls in or is within a gap after."""
    [found] = [s for s in sessions if s.key == account and s.start_ms <= ms < s.end_ms + GAP_MS]
    return found


def test_the_same_spec_and_seed_give_byte_identical_files(tmp_path, written):
    summary, _ = written
    again = generate_payments(SPEC, tmp_path)
    assert [p.read_bytes() for p in again.files] == [p.read_bytes() for p in summary.files]
    other = generate_payments(PaymentsSpec(seed=8), tmp_path / "other")
    assert other.files[0].read_bytes() != summary.files[0].read_bytes()


def test_files_come_in_order_and_hold_every_record_once(written, layout):
    summary, _ = written
    mtimes = [p.stat().st_mtime for p in summary.files]
    assert mtimes == sorted(mtimes) and len(set(mtimes)) == len(mtimes) == SPEC.files
    files, _ = layout
    valid = sorted(pair for f in files for pair in f)
    assert valid == sorted((p.account, p.at_ms) for p in summary.payments)
    assert len(set(valid)) == len(valid)  # no account has two payments at one time
    assert sum(len(p.read_bytes().splitlines()) for p in summary.files) == summary.records
    assert summary.records == len(summary.payments) + len(summary.hostile)


def test_each_hostile_record_has_exactly_the_one_fault_it_names(written):
    summary, landing = written
    reference = Reference(
        example("payments"),
        {"large_amounts_in_eur": lambda r: r["amount"] < 1000 or r["currency"] == "EUR"},
    )
    for hostile in summary.hostile:
        line = (landing / hostile.file).read_bytes().splitlines()[hostile.line - 1]
        assert reference.faults(line) == {hostile.reason.value}, line[:200]
    reasons = {h.reason.value for h in summary.hostile}
    assert reasons >= {
        "malformed_json",
        "missing_field",
        "wrong_type",
        "invalid_timestamp",
        "out_of_range",
        "not_allowed",
        "rule_failed",
        "invalid_key",
        "record_too_large",
        "invalid_utf8",
        "too_long",
        "pattern_mismatch",
        "timestamp_in_future",
    }


def test_every_valid_payment_passes_validation(written):
    summary, _ = written
    reference = Reference(
        example("payments"),
        {"large_amounts_in_eur": lambda r: r["amount"] < 1000 or r["currency"] == "EUR"},
    )
    for payment in summary.payments:
        assert reference.faults(payment.line()) == set(), payment
    assert any(p.city is None for p in summary.payments)  # online: no geo
    assert any(p.currency == "EUR" and p.amount >= 1000 for p in summary.payments)


def test_each_bridge_arrives_after_both_its_sessions_were_written_while_the_first_is_kept(
    written, layout
):
    summary, _ = written
    _, marks = layout
    sessions = on_time_sessions(summary)
    assert summary.bridges
    for bridge in summary.bridges:
        payment = bridge.payment
        first = session_at(sessions, payment.account, bridge.first_start_ms)
        second = session_at(sessions, payment.account, bridge.second_start_ms)
        assert first != second
        assert payment.at_ms - first.end_ms < GAP_MS and second.start_ms - payment.at_ms < GAP_MS
        k = where(layout, payment)
        assert marks[k - 1] >= second.end_ms + GAP_MS  # the second one written before
        assert marks[k + 1] < first.end_ms + KEEP_MS  # the first one still kept
        [merged] = [s for s in summary.sessions() if s.start_ms == first.start_ms]
        assert merged.end_ms >= second.end_ms and merged.key == payment.account


def test_each_late_payment_revises_a_written_session_still_kept(written, layout):
    summary, _ = written
    _, marks = layout
    sessions = on_time_sessions(summary)
    assert summary.late
    for payment in summary.late:
        session = session_at(sessions, payment.account, payment.at_ms)
        k = where(layout, payment)
        assert marks[k - 1] >= session.end_ms + GAP_MS
        assert marks[k + 1] < session.end_ms + KEEP_MS


def test_each_too_late_payment_finds_its_session_gone_and_is_past_the_lateness(written, layout):
    summary, _ = written
    _, marks = layout
    sessions = on_time_sessions(summary)
    assert summary.too_late
    lateness_ms = SPEC.ms(SPEC.allowed_lateness)
    for payment in summary.too_late:
        session = session_at(sessions, payment.account, payment.at_ms)
        k = where(layout, payment)
        assert marks[k - 1] >= max(session.end_ms, payment.at_ms) + KEEP_MS
        assert marks[k - 1] - payment.at_ms > lateness_ms
        # no other session of the account within a gap of it
        near = [
            s
            for s in sessions
            if s.key == payment.account and s.start_ms - GAP_MS < payment.at_ms < s.end_ms + GAP_MS
        ]
        assert near == [session]


def test_the_final_sessions_are_the_gap_sessions_of_every_payment_but_the_too_late(written):
    summary, _ = written
    accepted = summary.accepted
    assert len(accepted) == len(summary.payments) - len(summary.too_late)
    sessions = summary.sessions()
    assert sum(s.events for s in sessions) == len(accepted)
    # bridges take two sessions into one
    assert len(sessions) == len(on_time_sessions(summary)) - len(summary.bridges)


def test_start_moves_every_event_time(tmp_path):
    later = datetime(2027, 3, 1, tzinfo=UTC)
    summary = generate_payments(PaymentsSpec(accounts=20, start=later, files=5), tmp_path)
    assert later <= summary.first_event < later + timedelta(hours=1)


def test_gap_sessions_split_where_a_gap_or_more_passes():
    gap = timedelta(minutes=20)
    events = [("a", 0), ("a", 1_199_999), ("a", 2_399_999), ("b", 5), ("a", 3_599_998)]
    assert gap_sessions(events, gap) == [
        TrueSession("a", 0, 1_199_999, 2),
        TrueSession("a", 2_399_999, 3_599_998, 2),
        TrueSession("b", 5, 5, 1),
    ]


def test_a_spec_whose_lateness_cannot_hold_a_bridge_is_refused():
    from streamwarden.errors import UsageError

    with pytest.raises(UsageError, match="allowed_lateness"):
        PaymentsSpec(allowed_lateness=timedelta(minutes=30))
