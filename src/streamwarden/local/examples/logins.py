"""The logins example (``examples/logins.toml``): login attempts, some of them attacks.

Each user logs in in episodes at least ``episode_gap`` apart (more than twice the pattern's
``within``), so no pattern can span two episodes, and no success comes between the failures of
an episode. An episode is:

- ``normal``: a success, or a failure then a success;
- ``attack``: three failures then a success, all within 5 minutes (``within`` is 8 at least):
  the one true match of the pattern "three failures, then a success, within 10 minutes";
- near misses, which must not match: ``two_failures`` (two failures then a success),
  ``slow_success`` (three quick failures, the success 2 to 8 minutes past ``within`` after the
  first), ``slow_failures`` (three failures and a success, each 4 to 5 tenths of ``within``
  after the one before: 1.2 ``within`` at least from first to last) and ``no_success`` (three
  failures, nothing after).

So :attr:`LoginsSummary.matches` are the true matches by construction, whichever skip strategy
the pattern has. Records arrive up to ``disorder`` after their event time, less than the
pipeline's ``max_out_of_orderness``: none is ``too_late``. A few hostile records, each with
exactly one fault, are spread over the files.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.errors import UsageError
from streamwarden.local.examples.landing import (
    EPOCH,
    Hostile,
    Line,
    epoch_ms,
    split_evenly,
    write_landing,
)
from streamwarden.validation.reasons import Reason

__all__ = ["NEAR_MISSES", "Login", "LoginsSpec", "LoginsSummary", "Match", "generate_logins"]

_SECOND, _MINUTE = 1_000, 60_000
#: The episodes that come close to the pattern without matching it.
NEAR_MISSES = ("two_failures", "slow_success", "slow_failures", "no_success")
_DEVICES = ("ios", "android", "web")


@dataclass(frozen=True)
class Login:
    """One valid login attempt."""

    user: str
    ts_ms: int
    status: str
    ip: str
    device: str

    def line(self) -> bytes:
        record = {
            "user": self.user,
            "ts": self.ts_ms,
            "status": self.status,
            "ip": self.ip,
            "device": self.device,
        }
        return json.dumps(record).encode()


@dataclass(frozen=True)
class Match:
    """A true match: the three failures' and the success's times, epoch milliseconds."""

    user: str
    failures: tuple[int, int, int]
    success: int


@dataclass(frozen=True)
class LoginsSpec:
    """What logins to generate; times are simulated event time. ``within`` and
    ``max_out_of_orderness`` must be the pipeline's (those of ``examples/logins.toml``)."""

    users: int = 300
    episodes_per_user: tuple[int, int] = (1, 5)
    #: Shares of the episodes that are attacks, and near misses (of the four kinds in turn).
    attack_fraction: float = 0.1
    near_miss_fraction: float = 0.15
    within: timedelta = timedelta(minutes=10)
    #: Time from an episode's last attempt to the next episode's first.
    episode_gap: tuple[timedelta, timedelta] = (timedelta(minutes=30), timedelta(hours=3))
    #: The users' first episodes start within this time from ``start``.
    spread: timedelta = timedelta(hours=1)
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    disorder: timedelta = timedelta(seconds=20)
    max_out_of_orderness: timedelta = timedelta(minutes=1)
    #: How many times each hostile shape is written.
    hostile_copies: int = 2
    files: int = 30
    seed: int = 7

    def __post_init__(self) -> None:
        if self.users < 1 or self.files < 1 or self.hostile_copies < 0:
            raise UsageError("users and files must be >= 1, hostile_copies >= 0")
        low, high = self.episodes_per_user
        if not 1 <= low <= high:
            raise UsageError(f"episodes_per_user must be a range from 1, got {(low, high)}")
        if self.within < timedelta(minutes=8):
            raise UsageError(f"within must be 8 minutes at least, got {self.within}")
        if not self.within * 2 < self.episode_gap[0] <= self.episode_gap[1]:
            raise UsageError(f"episode_gap must be a range over two within, got {self.episode_gap}")
        if self.disorder >= self.max_out_of_orderness:
            raise UsageError("disorder must be under max_out_of_orderness, or records are late")
        if self.attack_fraction + self.near_miss_fraction > 1:
            raise UsageError("attack_fraction + near_miss_fraction must be 1 at most")


@dataclass
class LoginsSummary:
    """What was written, by construction."""

    records: int = 0
    #: Every valid login, by user and time.
    logins: list[Login] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    #: Near-miss episodes by kind.
    near_misses: Counter[str] = field(default_factory=Counter)
    hostile: list[Hostile] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    @property
    def first_event(self) -> datetime:
        return EPOCH + timedelta(milliseconds=min(x.ts_ms for x in self.logins))

    @property
    def last_event(self) -> datetime:
        return EPOCH + timedelta(milliseconds=max(x.ts_ms for x in self.logins))

    def describe(self) -> str:
        users = len({x.user for x in self.logins})
        return (
            f"{self.records:,} records ({len(self.logins):,} logins of {users:,} users; "
            f"{len(self.matches):,} attacks to match, {sum(self.near_misses.values()):,} near "
            f"misses; {len(self.hostile):,} hostile)"
        )


def generate_logins(
    spec: LoginsSpec, landing: Path, *, file_prefix: str = "logins", mtime_after: float = 0.0
) -> LoginsSummary:
    """Writes the logins of ``spec`` into ``landing`` (see the module's description)."""
    rng = random.Random(spec.seed)
    summary = LoginsSummary()
    for n in range(spec.users):
        _user(spec, rng, f"user-{n:05d}", summary)
    summary.logins.sort(key=lambda x: (x.user, x.ts_ms))
    disorder = spec.disorder // timedelta(milliseconds=1)
    arrivals = sorted(
        (x.ts_ms + rng.random() * disorder, x.user, x.ts_ms, x) for x in summary.logins
    )
    lines = [
        [Line(a[3].line()) for a in arrivals[i:j]]
        for i, j in split_evenly(len(arrivals), spec.files)
    ]
    base = summary.logins[rng.randrange(len(summary.logins))]
    for data, reason in _hostile(base) * spec.hostile_copies:
        chosen = lines[rng.randrange(len(lines))]
        chosen.insert(rng.randrange(len(chosen) + 1), Line(data, reason))
    summary.records = sum(len(f) for f in lines)
    summary.files, summary.hostile = write_landing(
        landing, lines, prefix=file_prefix, mtime_after=mtime_after
    )
    return summary


def _user(spec: LoginsSpec, rng: random.Random, user: str, summary: LoginsSummary) -> None:
    """One user's episodes, added to ``summary``."""
    n = int(user.rsplit("-", 1)[1])
    home_ip = f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"
    device = rng.choice(_DEVICES)
    t = epoch_ms(spec.start) + rng.randrange(spec.spread // timedelta(milliseconds=1))
    low, high = (d // timedelta(milliseconds=1) for d in spec.episode_gap)
    for _ in range(rng.randint(*spec.episodes_per_user)):
        kind = _kind(spec, rng)
        attacker = kind != "normal"
        ip = f"203.0.113.{rng.randrange(1, 255)}" if attacker else home_ip
        times = _times(spec, rng, kind, t)
        statuses = _statuses(kind, len(times))
        for at, status in zip(times, statuses, strict=True):
            summary.logins.append(Login(user, at, status, ip, "cli" if attacker else device))
        if kind == "attack":
            summary.matches.append(Match(user, (times[0], times[1], times[2]), times[3]))
        elif kind in NEAR_MISSES:
            summary.near_misses[kind] += 1
        t = times[-1] + rng.randint(low, high)


def _kind(spec: LoginsSpec, rng: random.Random) -> str:
    roll = rng.random()
    if roll < spec.attack_fraction:
        return "attack"
    if roll < spec.attack_fraction + spec.near_miss_fraction:
        return rng.choice(NEAR_MISSES)
    return "normal"


def _times(spec: LoginsSpec, rng: random.Random, kind: str, t: int) -> list[int]:
    """The attempts' times of an episode starting at ``t``."""
    within = spec.within // timedelta(milliseconds=1)

    def after(previous: int, low: int, high: int) -> int:
        return previous + rng.randint(low, high)

    quick = (5 * _SECOND, _MINUTE)
    if kind == "normal":
        count = rng.choice((1, 1, 2))
    elif kind == "slow_failures":
        apart = (within * 2 // 5, within // 2)  # 4 to 5 minutes of 10
        f2 = after(t, *apart)
        f3 = after(f2, *apart)
        return [t, f2, f3, after(f3, *apart)]
    else:
        count = 3 if kind in ("two_failures", "no_success") else 4
    times = [t]
    for _ in range(count - 1):
        times.append(after(times[-1], *quick))
    if kind == "slow_success":
        times[-1] = t + within + rng.randint(2 * _MINUTE, 8 * _MINUTE)
    elif kind == "attack":
        times[-1] = after(times[-2], 5 * _SECOND, 3 * _MINUTE)
    return times


def _statuses(kind: str, count: int) -> list[str]:
    """Failures, then a success (the last attempt), except in ``no_success``."""
    if kind == "no_success":
        return ["failure"] * count
    return ["failure"] * (count - 1) + ["success"]


def _hostile(base: Login) -> list[tuple[bytes, Reason]]:
    """Records made from ``base`` (a valid login), each with exactly one fault under
    ``examples/logins.toml``."""
    valid = json.loads(base.line())

    def changed(**changes: object) -> bytes:
        record = {**valid, **changes}
        return json.dumps({k: v for k, v in record.items() if v is not _DROP}).encode()

    return [
        (changed()[:-1], Reason.MALFORMED_JSON),
        (changed(status=_DROP), Reason.MISSING_FIELD),
        (changed(ts=str(base.ts_ms)), Reason.WRONG_TYPE),
        (changed(ts=base.ts_ms // 1000), Reason.INVALID_TIMESTAMP),  # seconds, read as ms: 1970
        (changed(status="locked"), Reason.NOT_ALLOWED),
        (changed(ip="localhost"), Reason.PATTERN_MISMATCH),
        (changed(user=""), Reason.INVALID_KEY),
    ]


_DROP = object()
