"""The brute-force ``p1_then_p2`` count that the benchmarks check both engines' matches against
(bench/make_sample_events.py): its streaming form over events in time order, which counts the
scale runs' tens of millions of events, and the sorting form over events in any order. Pure
Python."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from make_sample_events import Event, count_p1_then_p2_in_time_order, reference_p1_then_p2

WITHIN = 30 * 60_000


def test_a_page_two_less_than_the_window_after_a_page_one_of_the_same_user_is_a_match() -> None:
    events = [("a", 0, 1), ("b", 10, 2), ("a", WITHIN - 1, 2)]
    assert count_p1_then_p2_in_time_order(events, WITHIN) == 1


def test_a_page_two_a_whole_window_after_its_page_one_is_no_match() -> None:
    assert count_p1_then_p2_in_time_order([("a", 0, 1), ("a", WITHIN, 2)], WITHIN) == 0


def test_after_a_match_the_search_restarts_past_its_page_two() -> None:
    events = [("a", 0, 1), ("a", 1, 1), ("a", 2, 2), ("a", 3, 2), ("a", 4, 1), ("a", 5, 2)]
    assert count_p1_then_p2_in_time_order(events, WITHIN) == 2


def test_the_sorting_form_counts_events_in_any_order_as_the_streaming_one_in_time_order() -> None:
    in_time_order = [("a", 0, 1), ("b", 5, 1), ("a", 7, 2), ("b", 9, 2), ("b", 11, 2)]
    arrival = [in_time_order[i] for i in (3, 0, 4, 2, 1)]
    events = [Event(user, ts, page, f"/page/{page}") for user, ts, page in arrival]
    assert reference_p1_then_p2(events, WITHIN) == 2
    assert count_p1_then_p2_in_time_order(in_time_order, WITHIN) == 2
    # the streaming form needs time order: in arrival order it would miss b's match
    assert count_p1_then_p2_in_time_order(arrival, WITHIN) == 1
