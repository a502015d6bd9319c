"""The logins example's generator: deterministic; its true matches are exactly what a brute
force over the valid logins finds (three failures, then a success, within 10 minutes of the
first), with room on both sides of the window; no login is behind the watermark of its file;
each hostile record has exactly the one fault it names under ``examples/logins.toml``."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import timedelta
from itertools import combinations

import pytest

from streamwarden.local.examples.landing import watermarks
from streamwarden.local.examples.logins import NEAR_MISSES, Login, LoginsSpec, generate_logins
from tests.local.example_records import Reference, example

SPEC = LoginsSpec()
WITHIN_MS = SPEC.within // timedelta(milliseconds=1)
MINUTE_MS = 60_000


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    landing = tmp_path_factory.mktemp("logins")
    return generate_logins(SPEC, landing), landing


def brute_force(logins: list[Login], window_ms: int) -> set[tuple[str, tuple[int, ...], int]]:
    """Every (user, three failures, success) in time order whose success is at most
    ``window_ms`` after its first failure."""
    by_user = defaultdict(list)
    for login in sorted(logins, key=lambda x: (x.user, x.ts_ms)):
        by_user[login.user].append(login)
    found = set()
    for user, attempts in by_user.items():
        for i, first in enumerate(attempts):
            window = [x for x in attempts[i:] if x.ts_ms - first.ts_ms <= window_ms]
            failures = [x for x in window if x.status == "failure"]
            for a, b, c in combinations(failures, 3):
                if a is not first:
                    continue
                for success in (x for x in window if x.status == "success"):
                    if success.ts_ms > c.ts_ms:
                        found.add((user, (a.ts_ms, b.ts_ms, c.ts_ms), success.ts_ms))
    return found


def test_the_same_spec_and_seed_give_byte_identical_files(tmp_path, written):
    summary, _ = written
    again = generate_logins(SPEC, tmp_path)
    assert [p.read_bytes() for p in again.files] == [p.read_bytes() for p in summary.files]


def test_the_true_matches_are_what_a_brute_force_finds_with_a_minute_to_spare(written):
    summary, _ = written
    truth = {(m.user, m.failures, m.success) for m in summary.matches}
    assert len(truth) == len(summary.matches) > 0
    # the same matches with the window a minute shorter or longer: no match is near its edge
    assert brute_force(summary.logins, WITHIN_MS - MINUTE_MS) == truth
    assert brute_force(summary.logins, WITHIN_MS + MINUTE_MS) == truth


def test_each_match_is_its_user_s_only_attempts_for_a_while(written):
    # no other attempt of the user between its first failure and its success: one combination,
    # whatever the skip strategy and contiguity
    summary, _ = written
    for match in summary.matches:
        mine = [
            x.ts_ms
            for x in summary.logins
            if x.user == match.user
            and match.failures[0] - 2 * WITHIN_MS < x.ts_ms
            and x.ts_ms < match.success + 2 * WITHIN_MS
        ]
        assert mine == [*match.failures, match.success]


def test_every_kind_of_near_miss_is_there(written):
    summary, _ = written
    assert set(summary.near_misses) == set(NEAR_MISSES)


def test_no_login_is_behind_the_watermark_of_its_file(written):
    summary, _ = written
    hostile = {(h.file, h.line) for h in summary.hostile}
    files = [
        [
            json.loads(line)["ts"]
            for n, line in enumerate(path.read_bytes().splitlines(), start=1)
            if (path.name, n) not in hostile
        ]
        for path in summary.files
    ]
    marks = watermarks(files, SPEC.max_out_of_orderness)
    for k, times in enumerate(files):
        assert marks[k] is None or min(times) > marks[k]
    assert sum(len(f) for f in files) == len(summary.logins)


def test_each_hostile_record_has_exactly_the_one_fault_it_names(written):
    summary, landing = written
    reference = Reference(example("logins"))
    for hostile in summary.hostile:
        line = (landing / hostile.file).read_bytes().splitlines()[hostile.line - 1]
        assert reference.faults(line) == {hostile.reason.value}, line
    for login in summary.logins:
        assert reference.faults(login.line()) == set(), login
    assert {h.reason.value for h in summary.hostile} == {
        "malformed_json",
        "missing_field",
        "wrong_type",
        "invalid_timestamp",
        "not_allowed",
        "pattern_mismatch",
        "invalid_key",
    }
