"""Bisection's search, without Spark: a trial is a function of the records set aside."""

from __future__ import annotations

import pytest

from streamwarden.pipeline.bisect import find_culprits


def _batch_failing_on(culprits: set[int], trials: list[frozenset[int]]):
    def passes(set_aside: frozenset[int]) -> bool:
        trials.append(set_aside)
        return culprits <= set_aside

    return passes


@pytest.mark.parametrize(
    "culprits", [{0}, {7}, {63}, {5, 40}, {0, 1}, {3, 17, 44}, set(range(10, 14))]
)
def test_finds_exactly_the_records_that_fail_the_batch(culprits: set[int]) -> None:
    trials: list[frozenset[int]] = []
    found = find_culprits(list(range(64)), _batch_failing_on(culprits, trials))
    assert found == culprits
    # group testing, not one trial per record: about 2 k log2(n) + 2 trials
    assert len(trials) <= 2 + 2 * len(culprits) * 6 + len(culprits)


def test_a_failure_the_trial_does_not_see_is_not_pinned_on_records() -> None:
    """A batch that gets through in the trial with nothing set aside (a sink-side failure the
    side run cannot reproduce): nothing is quarantined."""
    assert find_culprits(list(range(8)), lambda set_aside: True) is None


def test_a_failure_without_any_record_is_not_pinned_on_records() -> None:
    assert find_culprits(list(range(8)), lambda set_aside: False) is None


def test_a_failure_that_needs_two_records_together_sets_aside_one_of_them() -> None:
    """Records 2 and 5 fail only together: setting aside either one lets the batch through, and
    bisection keeps the other."""
    found = find_culprits(list(range(8)), lambda s: 2 in s or 5 in s)
    assert found in ({2}, {5})
