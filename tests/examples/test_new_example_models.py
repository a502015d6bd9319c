"""The windows and refunds examples without Spark: the demo moves a two-source example's landing
folders under its own, the generators are deterministic and write what their summaries say,
and the plain-Python models the demos check against follow the rules of the guides on
explicit timestamps (a window closes at its end plus the lateness; a join row is too late more
than the lateness behind the watermark)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.local.examples.catalog import example_landing, generate_example
from streamwarden.local.examples.demo import example_demo_config
from streamwarden.local.examples.landing import epoch_ms
from streamwarden.local.examples.payments import Payment
from streamwarden.local.examples.refunds import (
    PaymentRecord,
    RefundRecord,
    RefundsSummary,
    expected_join,
)
from streamwarden.local.examples.windows import expected_windows

T0 = epoch_ms(datetime(2026, 1, 1, tzinfo=UTC))
MIN = 60_000


def test_the_refunds_demo_reads_each_source_from_its_own_folder_under_the_demo_s(tmp_path):
    config = example_demo_config("refunds", tmp_path)
    assert config.several is not None
    paths = {name: s.path for name, s in config.several.named.items()}
    assert paths == {n: tmp_path / "landing" / n for n in ("payments", "refunds")}
    assert example_landing("refunds").parts[-2:] == ("refunds", "landing")


def test_the_windows_demo_reads_the_payments_from_its_own_landing_folder(tmp_path):
    config = example_demo_config("windows", tmp_path)
    assert config.source.path == tmp_path / "landing"
    assert {s.path for s in config.sinks.values()} == {tmp_path / n for n in config.sinks}


def test_the_refunds_generator_is_deterministic_and_writes_both_sources(tmp_path: Path):
    first = generate_example("refunds", tmp_path / "a", seed=5, size=10, files=4)
    again = generate_example("refunds", tmp_path / "b", seed=5, size=10, files=4)
    assert [p.read_bytes() for p in first.files] == [p.read_bytes() for p in again.files]
    assert {p.parent.name for p in first.files} == {"payments", "refunds"}
    lines = sum(len(p.read_bytes().splitlines()) for p in first.files)
    assert lines == first.records
    assert isinstance(first, RefundsSummary)
    assert first.refunds and len(first.hostile) == 20  # five faults, twice, per source


def payment(at_ms: int, merchant: str = "m", account: str = "a") -> Payment:
    return Payment(account, at_ms, 10.0, "EUR", merchant, "FR", None)


def test_a_window_takes_late_payments_until_its_end_plus_the_lateness():
    # windows of 5 minutes, lateness 10 minutes, watermark = the latest time before, no delay
    batches = [
        [payment(T0 + 1 * MIN)],  # window [0, 5m)
        [payment(T0 + 15 * MIN)],  # the watermark becomes 15m: [0, 5m) closes at 15m
        [payment(T0 + 2 * MIN), payment(T0 + 6 * MIN, account="b")],  # too late; [5m, 10m) open
    ]
    windows, too_late = expected_windows(
        batches,
        size=timedelta(minutes=5),
        allowed_lateness=timedelta(minutes=10),
        max_out_of_orderness=timedelta(0),
    )
    assert [(w.start_ms - T0, w.payments) for w in windows] == [(0, 1), (5 * MIN, 1), (15 * MIN, 1)]
    assert [p.at_ms - T0 for p in too_late] == [2 * MIN]


def test_the_join_model_pairs_within_the_interval_and_writes_lonely_payments():
    pay = [PaymentRecord(f"p{i}", "a", T0 + i * MIN, 1.0, "m") for i in range(3)]
    refunds = [
        RefundRecord("r0", "p0", T0 + 30 * MIN, 1.0, "returned"),  # within 1h: a pair
        RefundRecord("r1", "p1", T0 + 2 * 60 * MIN, 1.0, "returned"),  # after 1h: p1 alone
        RefundRecord("r2", "p2", T0 - 60 * MIN, 1.0, "returned"),  # too late in batch 1
    ]
    summary = RefundsSummary(batches={"payments": [pay], "refunds": [refunds[:2], [refunds[2]]]})
    rows, too_late = expected_join(
        summary,
        within=timedelta(hours=1),
        allowed_lateness=timedelta(minutes=10),
        max_out_of_orderness=timedelta(0),
    )
    assert sorted((r.payment.payment_id, r.refund and r.refund.refund_id) for r in rows) == [
        ("p0", "r0"),
        ("p1", None),
        ("p2", None),
    ]
    assert too_late == [refunds[2]]
