"""The logins example end to end, through the command line: login attempts (a BIGINT time in
ms, a status checked against its allowed values, an IP against a pattern) searched per user for
three failed logins then a success within 10 minutes. The matches equal a brute force over the
logins the generator wrote, each matched event carries the declared fields with their types,
every hostile record is a dead letter with the reason it was made for, and the run's accounting
balances."""

from __future__ import annotations

from datetime import timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from streamwarden.local.examples.logins import Login, LoginsSpec, generate_logins
from streamwarden.pipeline.outputs import read_output
from tests.examples.support import example_config, run_cli

pytestmark = pytest.mark.spark

WITHIN_MS = timedelta(minutes=10) // timedelta(milliseconds=1)  # examples/logins.toml
SPEC = LoginsSpec(users=80, files=16, seed=5)


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = Path(tmp_path_factory.mktemp("logins"))
    summary = generate_logins(SPEC, root / "landing")
    done = run_cli(example_config("logins", root))
    assert done.returncode == 0, done.stderr[-2000:]
    matches = read_output(spark, root / "matches")
    dead = read_output(spark, root / "dead_letters")
    assert matches is not None and dead is not None
    return {
        "summary": summary,
        "matches": [r.asDict(recursive=True) for r in matches.collect()],
        "schema": matches.schema,
        "dead": [r.asDict() for r in dead.collect()],
    }


def brute_force(logins: list[Login]) -> set[tuple[str, tuple[int, ...]]]:
    """Every (user, times) of three failures and a later success, all within 10 minutes of the
    first failure, that share no event with an earlier such match of the user (skip past the
    last event): what the pattern's rules say, by enumeration."""
    found: set[tuple[str, tuple[int, ...]]] = set()
    by_user: dict[str, list[Login]] = {}
    for login in sorted(logins, key=lambda x: (x.user, x.ts_ms)):
        by_user.setdefault(login.user, []).append(login)
    for user, attempts in by_user.items():
        taken_until = -1
        candidates = []
        for four in combinations(attempts, 4):
            *failures, success = four
            if (
                all(f.status == "failure" for f in failures)
                and success.status == "success"
                and success.ts_ms - failures[0].ts_ms <= WITHIN_MS
            ):
                candidates.append(tuple(x.ts_ms for x in four))
        for times in sorted(candidates, key=lambda t: (t[-1], t)):
            if times[0] > taken_until:
                found.add((user, times))
                taken_until = times[-1]
    return found


def test_matches_equal_a_brute_force_over_the_logins(run) -> None:
    got = {
        (m["key"], tuple(int(e["event_time"].timestamp() * 1000) for e in m["events"]))
        for m in run["matches"]
    }
    expected = brute_force(run["summary"].logins)
    assert expected, "the generated data holds attacks by construction"
    assert got == expected
    by_construction = {(m.user, (*m.failures, m.success)) for m in run["summary"].matches}
    assert got == by_construction


def test_matched_events_carry_the_declared_fields_with_their_types(run) -> None:
    event = run["schema"]["events"].dataType.elementType
    assert [f.name for f in event.fields] == ["stage", "event_time", "status", "ip", "device"]
    assert {f.dataType.simpleString() for f in event.fields[2:]} == {"string"}
    first = run["matches"][0]["events"]
    assert [e["stage"] for e in first] == ["failure"] * 3 + ["success"]
    assert [e["status"] for e in first] == ["failure"] * 3 + ["success"]


def test_every_hostile_record_is_a_dead_letter_with_the_reason_it_was_made_for(run) -> None:
    reasons = {d["raw"]: d["reason"] for d in run["dead"]}
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile
    assert len(run["dead"]) == len(run["summary"].hostile)  # nothing else: no event too late
