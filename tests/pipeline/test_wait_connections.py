"""A continuous run that finds a connection down at start waits for it, with a back-off and one
line per attempt, up to ``[supervisor] wait_for_connections``; without Spark or a broker (the
real broker case is tests/kafka/test_broker_outage.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamwarden.config.model import SupervisorConfig
from streamwarden.errors import ConfigError, UnreachableError
from streamwarden.pipeline.wait_connections import wait_for_connections


class FakeTime:
    """A clock and a stop request whose waits only advance the clock (set: a signal came)."""

    def __init__(self, stop_at: float | None = None) -> None:
        self.now = 0.0
        self.waits: list[float] = []
        self.stop_at = stop_at

    def __call__(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waits.append(timeout)
        self.now += timeout
        return self.stop_at is not None and self.now >= self.stop_at


def down_for(attempts: int, time: FakeTime, attempt_s: float = 10.0):
    """A check that fails ``attempts`` times (each taking ``attempt_s``), then passes."""
    calls = []

    def check() -> None:
        calls.append(time.now)
        if len(calls) <= attempts:
            time.now += attempt_s
            raise UnreachableError("Kafka at '127.0.0.1:9' did not answer within 10 s")

    return check, calls


def wait(check, time: FakeTime, limit: timedelta | None, lines: list[str]) -> bool:
    return wait_for_connections(
        check,
        limit=limit,
        first_backoff=timedelta(seconds=2),
        max_backoff=timedelta(seconds=30),
        stop=time,
        say=lines.append,
        clock=time,
    )


def test_it_waits_with_a_doubling_backoff_and_one_line_per_attempt_until_the_cluster_is_up():
    time, lines = FakeTime(), []
    check, calls = down_for(6, time)
    assert wait(check, time, timedelta(minutes=10), lines) is True
    assert len(calls) == 7
    assert time.waits == [2, 4, 8, 16, 30, 30]  # doubled, capped at max_backoff
    assert len(lines) == 6 and all("\n" not in line for line in lines)
    assert lines[0].startswith("connection check 1 failed after 10 s of 600 s")
    assert "did not answer" in lines[0] and "next attempt in 2.0 s" in lines[0]


def test_it_gives_up_with_the_last_error_when_the_next_attempt_would_start_past_the_limit():
    time, lines = FakeTime(), []
    check, calls = down_for(100, time)
    with pytest.raises(UnreachableError, match="did not answer"):
        wait(check, time, timedelta(minutes=1), lines)
    # attempts at 0, 12, 26 (each 10 s, then 2, 4 s back-off); the 4th would start at 44+8 s...
    assert calls == [0, 12, 26, 44]
    assert time.now <= 60


def test_off_and_once_do_not_wait():
    time, lines = FakeTime(), []
    check, calls = down_for(1, time)
    with pytest.raises(UnreachableError):
        wait(check, time, None, lines)
    assert len(calls) == 1 and lines == [] and time.waits == []


def test_an_error_no_wait_fixes_ends_at_once():
    time, lines = FakeTime(), []

    def missing_topic() -> None:
        raise ConfigError("source.topics: topic 'x' does not exist")

    with pytest.raises(ConfigError):
        wait(missing_topic, time, timedelta(minutes=10), lines)
    assert lines == [] and time.waits == []


def test_a_stop_signal_while_waiting_ends_the_wait():
    time, lines = FakeTime(stop_at=5), []
    check, calls = down_for(100, time)
    assert wait(check, time, timedelta(minutes=10), lines) is False
    assert len(calls) == 1


def test_the_setting_defaults_to_ten_minutes_and_off_turns_it_off():
    assert SupervisorConfig().wait_for_connections == timedelta(minutes=10)
    off = SupervisorConfig.model_validate({"wait_for_connections": "off"})
    assert off.wait_for_connections is None
