"""What an example's demo wrote, shown and compared with what its generated data holds by
construction: the sessions of ``payments``, the matches of ``logins``, the alerts of
``alerts``, the windows of ``windows``, the joined rows of ``refunds``, and the dead letters of
each by reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.local.examples.alerts import expected_alerts
from streamwarden.local.examples.logins import LoginsSummary
from streamwarden.local.examples.payments import PaymentsSummary
from streamwarden.local.examples.refunds import RefundsSummary, expected_join
from streamwarden.local.examples.windows import expected_windows, payments_by_file
from streamwarden.operators.sessions.accounting import final_sessions
from streamwarden.sinks.parquet import parquet_folder, read_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streamwarden.config import PipelineConfig
    from streamwarden.local.examples.catalog import GeneratedExample

__all__ = ["show_outcome"]


def show_outcome(
    name: str, spark: SparkSession, config: PipelineConfig, summary: GeneratedExample
) -> bool:
    """Prints what example ``name``'s pipeline wrote; False when it differs from what was put
    in."""
    show = _OUTCOMES[name]
    got, reasons = show(_Outputs(spark, config), config, summary)
    return _show_dead_letters(_Outputs(spark, config).read("dead_letters"), reasons) and got


class _Outputs:
    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        self.spark, self.config = spark, config

    def read(self, sink: str) -> DataFrame | None:
        return read_output(self.spark, parquet_folder(self.config.sinks[sink]))


def _sessions(out: _Outputs, config: Any, summary: Any) -> tuple[bool, Counter[str]]:
    assert isinstance(summary, PaymentsSummary)
    reasons = _hostile(summary) + Counter({"too_late": len(summary.too_late)})
    revisions = out.read("sessions")
    if revisions is None:
        return _compare("final sessions", len(summary.sessions()), 0), reasons
    final = final_sessions(revisions)
    print("\nthe largest sessions (final revisions):")
    final.orderBy(F.desc("total"), "account").select(
        "account",
        "session_start",
        "event_count",
        "revision",
        "total",
        "largest",
        "merchants",
        "first_country",
        "last_country",
        "cities",
    ).show(5, truncate=False)
    merged = revisions.where(F.size("merged_session_ids") > 0).select("session_id").distinct()
    same = _compare("final sessions", len(summary.sessions()), final.count())
    return _compare("sessions that merged others", len(summary.bridges), merged.count()) and (
        same
    ), reasons


def _matches(out: _Outputs, config: Any, summary: Any) -> tuple[bool, Counter[str]]:
    assert isinstance(summary, LoginsSummary)
    matches = out.read("matches")
    if matches is None:
        return _compare("matches", len(summary.matches), 0), _hostile(summary)
    print("\nsome matches:")
    order = [c for c in ("match_start", "key", "user") if c in matches.columns]
    matches.orderBy(*order).show(5, truncate=False)
    return _compare("matches", len(summary.matches), matches.count()), _hostile(summary)


def _alerts(out: _Outputs, config: Any, summary: Any) -> tuple[bool, Counter[str]]:
    assert isinstance(summary, PaymentsSummary)
    alerts, too_late = expected_alerts(
        summary.files, summary.payments, config.section.max_out_of_orderness
    )
    reasons = _hostile(summary) + Counter({"too_late": len(too_late)})
    written = out.read("output")
    if written is not None:
        print("\nsome alerts:")
        written.orderBy(F.desc("amount")).show(5, truncate=False)
    return _compare("alerts", len(alerts), 0 if written is None else written.count()), reasons


def _windows(out: _Outputs, config: Any, summary: Any) -> tuple[bool, Counter[str]]:
    assert isinstance(summary, PaymentsSummary)
    section = config.section
    windows, too_late = expected_windows(
        payments_by_file(summary.files, summary.payments),
        size=section.size,
        allowed_lateness=section.allowed_lateness,
        max_out_of_orderness=section.max_out_of_orderness,
    )
    reasons = _hostile(summary) + Counter({"too_late": len(too_late)})
    written = out.read("windows")
    if written is None:
        return _compare("windows", len(windows), 0), reasons
    print("\nthe busiest windows:")
    written.orderBy(F.desc("payments"), "window_start", "merchant").select(
        "merchant", "window_start", "window_end", "payments", "total", "accounts"
    ).show(5, truncate=False)
    counted = written.agg(F.sum("payments").alias("n")).collect()[0]["n"]
    same = _compare("windows", len(windows), written.count())
    return _compare(
        "payments in windows", sum(w.payments for w in windows), int(counted or 0)
    ) and same, reasons


def _joined(out: _Outputs, config: Any, summary: Any) -> tuple[bool, Counter[str]]:
    assert isinstance(summary, RefundsSummary)
    section = config.section
    rows, too_late = expected_join(
        summary,
        within=section.between[1],
        allowed_lateness=section.allowed_lateness,
        max_out_of_orderness=section.max_out_of_orderness,
        left_outer=section.type == "left_outer",
    )
    reasons = _hostile(summary) + Counter({"too_late": len(too_late)})
    written = out.read("joined")
    if written is None:
        return _compare("joined rows", len(rows), 0), reasons
    print("\nsome refunded payments:")
    written.where(F.col("refunds_refund_id").isNotNull()).orderBy("payments_at").select(
        "payments_payment_id", "payments_at", "payments_amount", "refunds_at", "refunds_amount"
    ).show(5, truncate=False)
    unmatched = written.where(F.col("refunds_refund_id").isNull()).count()
    same = _compare("joined rows", len(rows), written.count())
    expected_unmatched = sum(r.refund is None for r in rows)
    return _compare("payments without a refund", expected_unmatched, unmatched) and same, reasons


_Show = Callable[[_Outputs, Any, Any], tuple[bool, Counter[str]]]
_OUTCOMES: dict[str, _Show] = {
    "payments": _sessions,
    "logins": _matches,
    "alerts": _alerts,
    "windows": _windows,
    "refunds": _joined,
}


def _hostile(summary: PaymentsSummary | LoginsSummary | RefundsSummary) -> Counter[str]:
    return Counter(h.reason.value for h in summary.hostile)


def _show_dead_letters(frame: DataFrame | None, expected: Counter[str]) -> bool:
    rows = [] if frame is None else frame.groupBy("reason").count().collect()
    got = Counter({str(r["reason"]): int(r["count"]) for r in rows})
    expected = +expected  # no zero counts
    print("\ndead letters by reason (written / put in by construction):")
    for reason in sorted(expected.keys() | got.keys()):
        mark = "" if got[reason] == expected[reason] else "  <- differs"
        print(f"  {reason:<22} {got[reason]:>5,} / {expected[reason]:,}{mark}")
    return got == expected


def _compare(what: str, expected: int, got: int) -> bool:
    note = "as put in" if expected == got else f"but {expected:,} were put in"
    print(f"{what}: {got:,} ({note})")
    return expected == got
