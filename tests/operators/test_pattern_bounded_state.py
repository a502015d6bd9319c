"""Pattern state levels off and stays flat (lesson L1), on both of L1's load tests; and the
deliberate leak (state records of retired keys never removed) is visible, so these tests can
fail. The full-size runs (8192 keys, 24 simulated hours) are ``make soak``; the default suite
runs the same tests smaller."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from tests.operators.pattern_load import level_deviation, print_series, run_load

pytestmark = pytest.mark.spark
#: Matches per key-slot: the slot sends one event per 10 minutes, two events make a match.
MATCHES_PER_SLOT_HOUR = 3


def check_flat(run: Any, keys: int, hours: int, title: str) -> None:
    print_series(title, run)
    assert run.matches == keys * hours * MATCHES_PER_SLOT_HOUR
    assert level_deviation(run.state_rows[:hours], skip=1) <= 0.10, run.state_rows
    assert level_deviation(run.state_bytes[:hours], skip=1) <= 0.10, run.state_bytes
    assert run.state_rows[-1] == 0  # once the input ends and time passes, nothing is left


@pytest.mark.parametrize("test", [1, 2])
def test_state_levels_off_small(spark: Any, workdir: Path, test: int) -> None:
    keys, hours = 512, 6
    check_flat(
        run_load(spark, workdir, test=test, keys=keys, hours=hours), keys, hours, f"L1 test {test}"
    )


def test_the_deliberate_leak_grows_linearly_and_is_caught(spark: Any, workdir: Path) -> None:
    keys, hours = 512, 6
    run = run_load(spark, workdir, test=2, keys=keys, hours=hours, leak=True)
    print_series("L1 test 2 with the leak", run)
    assert run.matches == keys * hours * MATCHES_PER_SLOT_HOUR  # same answers ...
    rows = run.state_rows[:hours]
    # ... but state keeps every retired key: it grows every hour, by the keys of that hour
    assert all(later > earlier for earlier, later in pairwise(rows)), rows
    assert rows[-1] >= 0.9 * hours * rows[0], rows
    assert level_deviation(rows[1:], skip=1) > 0.10


@pytest.mark.soak
@pytest.mark.parametrize("test", [1, 2])
def test_state_levels_off_full_size(spark: Any, workdir: Path, test: int) -> None:
    keys, hours = 8192, 24
    check_flat(
        run_load(spark, workdir, test=test, keys=keys, hours=hours),
        keys,
        hours,
        f"L1 test {test} (full size)",
    )
