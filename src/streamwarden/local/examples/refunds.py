"""The refunds example (``examples/refunds_join.toml``): card payments, each with a
``payment_id``, and refunds of some of them, in two landing folders (``payments/`` and
``refunds/`` under the example's landing folder), joined per payment.

A refund comes ``0`` to ``2 * within`` after its payment (half of the span out of the join's
``between``, so those payments stay unmatched); each record arrives a few seconds after its
event time, and ``late_fraction`` of them up to ``late_by`` after it: some within the join's
lateness, some beyond. Both folders are cut into files by arrival time, file ``k`` of each
covering the same span of arrivals (an empty cut writes no file, so the files of a source
with empty cuts run ahead); a pipeline with ``max_files_per_trigger = 1`` reads the ``k``-th
file of each source in micro-batch ``k``. On top,
hostile records, each with exactly one fault and the reason it must get.

:func:`expected_join` works out, without Spark, what such a pipeline writes: the rows each
batch lets in (a row more than the lateness behind the watermark of the batches before is
``too_late``), joined as an interval join does.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.errors import UsageError
from streamwarden.local.examples.landing import (
    EPOCH,
    Hostile,
    Line,
    epoch_ms,
    iso_ms,
    split_evenly,
    write_landing,
)
from streamwarden.validation.reasons import Reason

__all__ = [
    "JoinedRow",
    "PaymentRecord",
    "RefundRecord",
    "RefundsSpec",
    "RefundsSummary",
    "expected_join",
    "generate_refunds",
]

_MERCHANTS = ("Fnac", "Decathlon", "Zara", "MediaMarkt", "Amazon", "Booking.com")
_REASONS = ("returned", "damaged", "duplicate", "cancelled")
#: The two sources, as the example's config names them (and their folders).
SOURCES = ("payments", "refunds")


@dataclass(frozen=True)
class PaymentRecord:
    payment_id: str
    account: str
    at_ms: int
    amount: float
    merchant: str

    def record(self) -> dict[str, object]:
        return {
            "payment_id": self.payment_id,
            "account": self.account,
            "at": iso_ms(self.at_ms),
            "amount": self.amount,
            "merchant": self.merchant,
        }


@dataclass(frozen=True)
class RefundRecord:
    refund_id: str
    payment_id: str
    at_ms: int
    amount: float
    reason: str

    def record(self) -> dict[str, object]:
        return {
            "refund_id": self.refund_id,
            "payment_id": self.payment_id,
            "at": iso_ms(self.at_ms),
            "amount": self.amount,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class JoinedRow:
    """One output row: a payment and its refund (None: a payment no refund matched)."""

    payment: PaymentRecord
    refund: RefundRecord | None


@dataclass(frozen=True)
class RefundsSpec:
    """What to generate; times are simulated event time. ``within`` must be the upper bound of
    the pipeline's ``between``."""

    accounts: int = 300
    payments_per_account: int = 8
    #: Payments are spread over this much event time from ``start``.
    span: timedelta = timedelta(hours=8)
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    refund_fraction: float = 0.3
    within: timedelta = timedelta(hours=2)
    #: On-time records arrive up to this much after their event time.
    disorder: timedelta = timedelta(seconds=20)
    late_fraction: float = 0.03
    late_by: timedelta = timedelta(hours=1)
    hostile_copies: int = 2
    files: int = 30
    seed: int = 7

    def __post_init__(self) -> None:
        if self.accounts < 1 or self.payments_per_account < 1 or self.files < 1:
            raise UsageError("accounts, payments_per_account and files must be >= 1")
        for name in ("refund_fraction", "late_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise UsageError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")


@dataclass
class RefundsSummary:
    """What was written, by construction: per source, its files and the valid records of each
    file in the order written."""

    records: int = 0
    batches: dict[str, list[list[PaymentRecord | RefundRecord]]] = field(default_factory=dict)
    hostile: list[Hostile] = field(default_factory=list)
    #: Every file written, of both sources.
    files: list[Path] = field(default_factory=list)

    @property
    def payments(self) -> list[PaymentRecord]:
        return [p for b in self.batches["payments"] for p in b if isinstance(p, PaymentRecord)]

    @property
    def refunds(self) -> list[RefundRecord]:
        return [r for b in self.batches["refunds"] for r in b if isinstance(r, RefundRecord)]

    @property
    def first_event(self) -> datetime:
        return EPOCH + timedelta(milliseconds=min(p.at_ms for p in self.payments))

    @property
    def last_event(self) -> datetime:
        times = [r.at_ms for b in self.batches.values() for rows in b for r in rows]
        return EPOCH + timedelta(milliseconds=max(times))

    def describe(self) -> str:
        return (
            f"{self.records:,} records ({len(self.payments):,} payments, "
            f"{len(self.refunds):,} refunds; {len(self.hostile):,} hostile)"
        )


def generate_refunds(
    spec: RefundsSpec, landing: Path, *, file_prefix: str = "refunds", mtime_after: float = 0.0
) -> RefundsSummary:
    """Writes the payments into ``landing/payments`` and the refunds into ``landing/refunds``
    (see the module's description)."""
    rng = random.Random(spec.seed)
    payments, refunds = _records(spec, rng)
    disorder, late_by = _ms(spec.disorder), _ms(spec.late_by)

    def arrival(at_ms: int) -> float:
        if rng.random() < spec.late_fraction:
            return at_ms + rng.random() * late_by
        return at_ms + rng.random() * disorder

    arrivals = sorted(
        [(arrival(p.at_ms), 0, n, p) for n, p in enumerate(payments)]
        + [(arrival(r.at_ms), 1, n, r) for n, r in enumerate(refunds)]
    )
    cuts = split_evenly(len(arrivals), spec.files)
    summary = RefundsSummary()
    for side, name in enumerate(SOURCES):
        rows = [[a[3] for a in arrivals[i:j] if a[1] == side] for i, j in cuts]
        rows = [r for r in rows if r]
        lines = [[Line(json.dumps(r.record()).encode()) for r in f] for f in rows]
        for bad, reason in _hostile(rows[0][0]) * spec.hostile_copies:
            k = rng.randrange(len(lines))
            lines[k].insert(rng.randrange(len(lines[k]) + 1), Line(bad, reason))
        paths, hostile = write_landing(
            landing / name, lines, prefix=f"{file_prefix}-{name}", mtime_after=mtime_after
        )
        summary.batches[name] = list(rows)
        summary.files += paths
        summary.hostile += hostile
        summary.records += sum(len(f) for f in lines)
    return summary


def _records(
    spec: RefundsSpec, rng: random.Random
) -> tuple[list[PaymentRecord], list[RefundRecord]]:
    start, span, within = epoch_ms(spec.start), _ms(spec.span), _ms(spec.within)
    payments: list[PaymentRecord] = []
    refunds: list[RefundRecord] = []
    for n in range(spec.accounts * spec.payments_per_account):
        at = start + rng.randrange(span)
        amount = round(rng.lognormvariate(3.2, 1.0) + 0.5, 2)
        account = f"acct-{rng.randrange(spec.accounts):05d}"
        payment = PaymentRecord(f"pay-{n:06d}", account, at, amount, rng.choice(_MERCHANTS))
        payments.append(payment)
        if rng.random() < spec.refund_fraction:
            part = amount if rng.random() < 0.7 else round(amount * rng.uniform(0.1, 0.9), 2)
            refunds.append(
                RefundRecord(
                    f"ref-{len(refunds):06d}",
                    payment.payment_id,
                    at + rng.randrange(2 * within + 1),
                    part,
                    rng.choice(_REASONS),
                )
            )
    return payments, refunds


def expected_join(
    summary: RefundsSummary,
    *,
    within: timedelta,
    allowed_lateness: timedelta,
    max_out_of_orderness: timedelta,
    left_outer: bool = True,
) -> tuple[list[JoinedRow], list[PaymentRecord | RefundRecord]]:
    """The rows a join of the payments with the refunds between ``0s`` and ``within`` writes,
    and the records that are ``too_late``, when batch ``k`` reads file ``k`` of each source."""
    payment_files, refund_files = summary.batches["payments"], summary.batches["refunds"]
    kept: list[PaymentRecord | RefundRecord] = []
    too_late: list[PaymentRecord | RefundRecord] = []
    latest: int | None = None
    delay, lateness = _ms(max_out_of_orderness), _ms(allowed_lateness)
    for k in range(max(len(payment_files), len(refund_files))):
        batch = _at(payment_files, k) + _at(refund_files, k)
        watermark = None if latest is None else latest - delay
        for row in batch:
            late = watermark is not None and row.at_ms < watermark - lateness
            (too_late if late else kept).append(row)
        if batch:
            top = max(r.at_ms for r in batch)
            latest = top if latest is None else max(latest, top)
    return _joined(kept, _ms(within), left_outer), too_late


def _joined(
    kept: Sequence[PaymentRecord | RefundRecord], within_ms: int, left_outer: bool
) -> list[JoinedRow]:
    refunds: dict[str, list[RefundRecord]] = {}
    for r in kept:
        if isinstance(r, RefundRecord):
            refunds.setdefault(r.payment_id, []).append(r)
    out = []
    for p in kept:
        if not isinstance(p, PaymentRecord):
            continue
        matches = [r for r in refunds.get(p.payment_id, []) if 0 <= r.at_ms - p.at_ms <= within_ms]
        out += [JoinedRow(p, r) for r in matches]
        if not matches and left_outer:
            out.append(JoinedRow(p, None))
    return out


def _at(
    files: list[list[PaymentRecord | RefundRecord]], k: int
) -> list[PaymentRecord | RefundRecord]:
    return files[k] if k < len(files) else []


def _hostile(base: PaymentRecord | RefundRecord) -> list[tuple[bytes, Reason]]:
    """Records made from ``base`` (a valid record of its source), each with one fault under
    ``examples/refunds_join.toml``."""
    valid = base.record()

    def changed(**changes: object) -> bytes:
        return json.dumps({**valid, **changes}).encode()

    zoneless = str(valid["at"]).removesuffix("Z")
    return [
        (changed()[:-1], Reason.MALFORMED_JSON),
        (changed(payment_id=None), Reason.MISSING_FIELD),
        (changed(amount="12.5"), Reason.WRONG_TYPE),
        (changed(at=zoneless), Reason.INVALID_TIMESTAMP),
        (changed(amount=-1.0), Reason.OUT_OF_RANGE),
    ]


def _ms(duration: timedelta) -> int:
    return duration // timedelta(milliseconds=1)
