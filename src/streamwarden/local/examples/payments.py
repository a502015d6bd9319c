"""The payments example (``examples/payments.toml``): card payments of accounts, in sessions.

Each account pays in sessions (payments ``think_time`` apart, well under the gap) separated by
idle periods longer than the gap, so the true sessions are known by construction. On top:

- **bridges**: some idle periods (never two in a row) are made short (1.2 to 1.5 gaps) and get
  one payment in their middle that arrives after the sessions on both sides were written (the
  watermark had passed the later one's end + gap) but while the earlier one is still kept (its
  end + gap + allowed lateness is ahead of the watermark): it merges the two;
- **late**: one payment of some other sessions arrives after its session was written, within
  the allowed lateness: a revision;
- **too late**: one payment of some other sessions arrives once its session has left state
  and it is more than the allowed lateness behind the watermark: a ``too_late`` dead letter;
- **hostile** records, each with exactly one fault and the reason it must get.

Files are cut from the on-time payments in arrival order (``files`` of them, as even as can be);
each late payment is put into a file whose watermark (what a pipeline reading one file per
micro-batch reads it under, :func:`~streamwarden.local.examples.landing.watermarks`) meets its
conditions with a margin on both sides: the file before already meets the lower bounds, the
file after still meets the upper ones. A late payment that fits no file is not written. So,
under the spec's ``gap``, ``allowed_lateness`` and ``max_out_of_orderness``, the final sessions
are the gap sessions of :attr:`PaymentsSummary.accepted` (:meth:`PaymentsSummary.sessions`).
"""

from __future__ import annotations

import json
import random
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
    watermarks,
    write_landing,
)
from streamwarden.local.examples.sessions import TrueSession, gap_sessions
from streamwarden.validation.reasons import Reason

__all__ = ["Bridge", "Payment", "PaymentsSpec", "PaymentsSummary", "generate_payments"]

_MINUTE = 60_000
#: Room kept between a late payment's conditions and the watermark of the files around it.
_MARGIN_MS = 2 * _MINUTE
_CITIES = {
    "FR": ("Paris", "Lyon", "Marseille", "Toulouse"),
    "DE": ("Berlin", "Hamburg", "Munich", "Cologne"),
    "ES": ("Madrid", "Barcelona", "Valencia", "Seville"),
}
_SHOPS = (
    "Carrefour",
    "Lidl",
    "Fnac",
    "Decathlon",
    "Zara",
    "MediaMarkt",
    "Rewe",
    "Mercadona",
    "Boulangerie Paul",
    "Shell",
)
#: Merchants without a place: their payments have no ``geo``, and some are in USD or GBP.
_ONLINE = ("Amazon", "Spotify", "Booking.com", "Steam")


@dataclass(frozen=True)
class Payment:
    """One valid payment record."""

    account: str
    at_ms: int
    amount: float
    currency: str
    merchant: str
    country: str
    #: ``geo.city``; None for an online payment, which has no ``geo``.
    city: str | None

    @property
    def at(self) -> datetime:
        return EPOCH + timedelta(milliseconds=self.at_ms)

    def record(self) -> dict[str, object]:
        """The record as written (``at`` as RFC 3339 text in UTC)."""
        data: dict[str, object] = {
            "account": self.account,
            "at": iso_ms(self.at_ms),
            "amount": self.amount,
            "currency": self.currency,
            "merchant": self.merchant,
            "country": self.country,
        }
        if self.city is not None:
            data["geo"] = {"city": self.city}
        return data

    def line(self) -> bytes:
        return json.dumps(self.record()).encode()


@dataclass(frozen=True)
class Bridge:
    """A late payment that merges two sessions written before it arrived."""

    payment: Payment
    first_start_ms: int
    second_start_ms: int


@dataclass(frozen=True)
class PaymentsSpec:
    """What payments to generate; times are simulated event time. ``gap``,
    ``allowed_lateness`` and ``max_out_of_orderness`` must be the pipeline's (those of
    ``examples/payments.toml``), since the late payments are placed against them."""

    accounts: int = 300
    sessions_per_account: tuple[int, int] = (1, 4)
    payments_per_session: tuple[int, int] = (1, 8)
    think_time: tuple[timedelta, timedelta] = (timedelta(seconds=5), timedelta(minutes=4))
    #: Idle time between two sessions beyond the gap (a bridged one excepted).
    extra_idle: tuple[timedelta, timedelta] = (timedelta(minutes=1), timedelta(minutes=90))
    #: The accounts' first sessions start within this time from ``start``.
    spread: timedelta = timedelta(hours=1)
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    gap: timedelta = timedelta(minutes=20)
    allowed_lateness: timedelta = timedelta(hours=1)
    max_out_of_orderness: timedelta = timedelta(minutes=1)
    #: On-time payments arrive up to this much after their event time.
    disorder: timedelta = timedelta(seconds=20)
    #: Share of idle periods made bridgeable (their bridge is written if it fits a file).
    bridge_fraction: float = 0.15
    #: Shares of the other sessions that get one late, or too late, payment.
    late_fraction: float = 0.1
    too_late_fraction: float = 0.05
    #: How many times each hostile shape is written.
    hostile_copies: int = 2
    files: int = 30
    seed: int = 7

    def __post_init__(self) -> None:
        if self.accounts < 1 or self.files < 1 or self.hostile_copies < 0:
            raise UsageError("accounts and files must be >= 1, hostile_copies >= 0")
        for name in ("sessions_per_account", "payments_per_session"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                raise UsageError(f"{name} must be a range (low, high) from 1, got {(low, high)}")
        if self.think_time[1] * 3 > self.gap or self.think_time[0] <= timedelta(0):
            raise UsageError(f"think_time must be > 0 and a third of gap {self.gap} at most")
        if self.gap * 2 + timedelta(minutes=10) > self.allowed_lateness:
            raise UsageError(
                f"allowed_lateness {self.allowed_lateness} must exceed two gaps and 10 minutes "
                "for a bridge to arrive after both its sessions were written"
            )
        for name in ("bridge_fraction", "late_fraction", "too_late_fraction"):
            if not 0.0 <= getattr(self, name) <= 0.5:
                raise UsageError(f"{name} must be in [0, 0.5], got {getattr(self, name)!r}")

    def ms(self, duration: timedelta) -> int:
        return duration // timedelta(milliseconds=1)


@dataclass
class PaymentsSummary:
    """What was written, by construction."""

    records: int = 0
    #: Every valid payment written (too late ones too), by account and time.
    payments: list[Payment] = field(default_factory=list)
    bridges: list[Bridge] = field(default_factory=list)
    #: Payments that arrive after their session was written, within the allowed lateness.
    late: list[Payment] = field(default_factory=list)
    too_late: list[Payment] = field(default_factory=list)
    hostile: list[Hostile] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    gap: timedelta = timedelta(minutes=20)

    @property
    def accepted(self) -> list[Payment]:
        """The payments that end in sessions: all valid ones but the too late."""
        too_late = set(self.too_late)
        return [p for p in self.payments if p not in too_late]

    def sessions(self) -> list[TrueSession]:
        """The final sessions: the accepted payments split by account wherever ``gap`` or more
        passes between two of them."""
        return gap_sessions([(p.account, p.at_ms) for p in self.accepted], self.gap)

    @property
    def first_event(self) -> datetime:
        return EPOCH + timedelta(milliseconds=min(p.at_ms for p in self.payments))

    @property
    def last_event(self) -> datetime:
        return EPOCH + timedelta(milliseconds=max(p.at_ms for p in self.payments))

    def describe(self) -> str:
        accounts = len({p.account for p in self.payments})
        return (
            f"{self.records:,} records ({len(self.payments):,} payments of {accounts:,} "
            f"accounts; {len(self.bridges):,} bridging, {len(self.late):,} late, "
            f"{len(self.too_late):,} too late; {len(self.hostile):,} hostile)"
        )


@dataclass
class _Session:
    payments: list[Payment]
    #: Next session's start, if the account has one.
    next_start_ms: int | None = None
    bridged: bool = False

    @property
    def start_ms(self) -> int:
        return self.payments[0].at_ms

    @property
    def end_ms(self) -> int:
        return self.payments[-1].at_ms


def generate_payments(
    spec: PaymentsSpec, landing: Path, *, file_prefix: str = "payments", mtime_after: float = 0.0
) -> PaymentsSummary:
    """Writes the payments of ``spec`` into ``landing`` (see the module's description)."""
    rng = random.Random(spec.seed)
    sessions: list[_Session] = []
    bridges: list[tuple[Payment, _Session, _Session]] = []
    for n in range(spec.accounts):
        account_sessions, account_bridges = _account(spec, rng, f"acct-{n:05d}")
        sessions += account_sessions
        bridges += account_bridges
    on_time = [p for s in sessions for p in s.payments]
    disorder = spec.ms(spec.disorder)
    arrivals = sorted((p.at_ms + rng.random() * disorder, p.account, p.at_ms, p) for p in on_time)
    files = [[a[3] for a in arrivals[i:j]] for i, j in split_evenly(len(arrivals), spec.files)]
    marks = watermarks([[p.at_ms for p in f] for f in files], spec.max_out_of_orderness)
    lines = [[Line(p.line()) for p in f] for f in files]
    summary = PaymentsSummary(payments=on_time, gap=spec.gap)
    placer = _Placer(spec, rng, marks, lines)
    for payment, first, second in bridges:
        if placer.bridge(payment, first, second):
            summary.bridges.append(Bridge(payment, first.start_ms, second.start_ms))
    for session in sessions:
        roll = rng.random()
        if session.bridged or roll >= spec.too_late_fraction + spec.late_fraction:
            continue
        too_late = roll < spec.too_late_fraction
        payment = _late_payment(spec, rng, session)
        if placer.late(payment, session, too_late=too_late):
            (summary.too_late if too_late else summary.late).append(payment)
    for bad, reason in _hostile(on_time[rng.randrange(len(on_time))]) * spec.hostile_copies:
        placer.put(rng.randrange(len(lines)), Line(bad, reason))
    summary.payments = sorted(
        on_time + [b.payment for b in summary.bridges] + summary.late + summary.too_late,
        key=lambda p: (p.account, p.at_ms),
    )
    summary.records = sum(len(f) for f in lines)
    summary.files, summary.hostile = write_landing(
        landing, lines, prefix=file_prefix, mtime_after=mtime_after
    )
    return summary


def _account(
    spec: PaymentsSpec, rng: random.Random, account: str
) -> tuple[list[_Session], list[tuple[Payment, _Session, _Session]]]:
    """One account's sessions, and the bridge payments of its bridged idle periods."""
    home = rng.choice(sorted(_CITIES))
    shops = rng.sample(_SHOPS, 4)
    t = epoch_ms(spec.start) + rng.randrange(spec.ms(spec.spread))
    sessions: list[_Session] = []
    bridges = []
    bridged = False
    for _ in range(rng.randint(*spec.sessions_per_account)):
        # a bridged pair's second session is short, so that it is written while the first one
        # is still kept
        count = rng.randint(1, 3) if bridged else rng.randint(*spec.payments_per_session)
        think = (5_000, 90_000) if bridged else tuple(spec.ms(d) for d in spec.think_time)
        payments = []
        for _ in range(count):
            payments.append(_payment(rng, account, t, home, shops))
            t += rng.randint(*think)
        session = _Session(payments)
        if sessions:
            sessions[-1].next_start_ms = session.start_ms
        if bridged:
            first = sessions[-1]
            middle = (first.end_ms + session.start_ms) // 2 + rng.randint(-_MINUTE, _MINUTE)
            bridges.append((_payment(rng, account, middle, home, shops), first, session))
            first.bridged = session.bridged = True
        sessions.append(session)
        # never two bridges in a row: each merges two sessions that no other bridge touches
        bridged = not bridged and rng.random() < spec.bridge_fraction
        gap = spec.ms(spec.gap)
        if bridged:
            idle = rng.randint(gap * 6 // 5, gap * 3 // 2)
        else:
            idle = gap + rng.randint(*(spec.ms(d) for d in spec.extra_idle))
        t = session.end_ms + idle
    return sessions, bridges


def _payment(rng: random.Random, account: str, at_ms: int, home: str, shops: list[str]) -> Payment:
    if rng.random() < 0.15:
        currency = rng.choices(("EUR", "USD", "GBP"), (6, 3, 1))[0]
        amount = round(min(rng.lognormvariate(2.5, 1.0), 999.0) + 0.5, 2)
        return Payment(account, at_ms, amount, currency, rng.choice(_ONLINE), home, None)
    country = home if rng.random() < 0.85 else rng.choice(sorted(_CITIES))
    amount = round(rng.lognormvariate(3.2, 1.1) + 0.5, 2)  # EUR: now and then 1000 or more
    city = rng.choice(_CITIES[country])
    return Payment(account, at_ms, amount, "EUR", rng.choice(shops), country, city)


def _late_payment(spec: PaymentsSpec, rng: random.Random, session: _Session) -> Payment:
    """A payment in ``session``'s span or a little after it, never within a gap of the next
    session; its time differs from every other of the account."""
    room = 5 * _MINUTE
    if session.next_start_ms is not None:
        room = min(room, session.next_start_ms - spec.ms(spec.gap) - _MINUTE - session.end_ms)
    at = rng.randint(session.start_ms + 1, session.end_ms + max(room, 1))
    taken = {p.at_ms for p in session.payments}
    while at in taken:
        at += 1
    first = session.payments[0]
    shops = [p.merchant for p in session.payments if p.city is not None] or list(_SHOPS[:4])
    return _payment(rng, first.account, at, first.country, shops)


class _Placer:
    """Puts late payments into the file whose watermark meets their conditions."""

    def __init__(
        self,
        spec: PaymentsSpec,
        rng: random.Random,
        marks: list[int | None],
        lines: list[list[Line]],
    ) -> None:
        self.rng = rng
        self.marks = marks
        self.lines = lines
        self.gap = spec.ms(spec.gap)
        self.keep = self.gap + spec.ms(spec.allowed_lateness)

    def bridge(self, payment: Payment, first: _Session, second: _Session) -> bool:
        """After ``second`` was written, while ``first`` is kept."""
        return self._place(payment, second.end_ms + self.gap, first.end_ms + self.keep)

    def late(self, payment: Payment, session: _Session, *, too_late: bool) -> bool:
        """After ``session`` was written and while it is kept; or (``too_late``) once it has
        left state and ``payment`` is more than the allowed lateness behind."""
        if too_late:
            return self._place(payment, max(session.end_ms, payment.at_ms) + self.keep, None)
        return self._place(payment, session.end_ms + self.gap, session.end_ms + self.keep)

    def _place(self, payment: Payment, after_ms: int, before_ms: int | None) -> bool:
        """Into a file k whose file before is read under a watermark at least ``after_ms``
        and whose file after under one below ``before_ms``, both with a margin."""
        marks = self.marks
        fits = [
            k
            for k in range(1, len(self.lines))
            if (low := marks[k - 1]) is not None
            and low >= after_ms + _MARGIN_MS
            and (before_ms is None or (marks[k + 1] or 0) <= before_ms - _MARGIN_MS)
        ]
        if not fits:
            return False
        self.put(self.rng.choice(fits[:3]), Line(payment.line()))
        return True

    def put(self, k: int, line: Line) -> None:
        self.lines[k].insert(self.rng.randrange(len(self.lines[k]) + 1), line)


def _hostile(base: Payment) -> list[tuple[bytes, Reason]]:
    """Records made from ``base`` (a valid payment), each with exactly one fault under
    ``examples/payments.toml``."""
    valid = Payment(base.account, base.at_ms, 12.5, "EUR", "Fnac", "FR", "Paris").record()

    def changed(**changes: object) -> bytes:
        record = {**valid, **changes}
        return json.dumps({k: v for k, v in record.items() if v is not _DROP}).encode()

    zoneless = str(valid["at"]).removesuffix("Z")
    utf8_hole = changed(merchant="caf@").replace(b"caf@", b"caf\xe9")  # Latin-1, not UTF-8
    return [
        (changed()[:-1], Reason.MALFORMED_JSON),
        (changed(amount=_DROP), Reason.MISSING_FIELD),
        (changed(amount="12.5"), Reason.WRONG_TYPE),
        (changed(geo="Paris"), Reason.WRONG_TYPE),
        (changed(at=zoneless), Reason.INVALID_TIMESTAMP),
        (changed(at="1999-12-31T23:59:59Z"), Reason.INVALID_TIMESTAMP),
        (changed(at="2999-01-01T00:00:00Z"), Reason.TIMESTAMP_IN_FUTURE),
        (changed(amount=-12.5), Reason.OUT_OF_RANGE),
        (changed(country="IT", geo={"city": "Rome"}), Reason.NOT_ALLOWED),
        (changed(amount=1500.0, currency="USD"), Reason.RULE_FAILED),
        (changed(merchant="Boulangerie " * 8), Reason.TOO_LONG),
        (changed(currency="eur"), Reason.PATTERN_MISMATCH),
        (changed(account="   "), Reason.INVALID_KEY),
        (changed(account=f"{base.account}\u0000"), Reason.INVALID_KEY),
        (changed(account="a" * 300), Reason.INVALID_KEY),
        (changed(note="x" * 70_000), Reason.RECORD_TOO_LARGE),
        (utf8_hole, Reason.INVALID_UTF8),
    ]


_DROP = object()
