"""The matches a scale run of ``p1_then_p2`` must find, from its files alone: is a difference
between ``detect`` and Flink ``MATCH_RECOGNIZE`` a lost match or the end of a bounded run?

Usage::

    .venv/bin/python bench/scale/check_matches.py bench/data/scale/n1000000-b50000-s54-l50-w3

Prints one JSON line: the events, and the reference count (``make_sample_events``'s
``p1_then_p2`` rule) over all of them and over those at or before the run's last watermark
(the newest event time minus the out-of-orderness, 60 s in ``state_growth.py``).

Flink ends a bounded input with an infinite watermark, so its job matches every event. A
Spark run of ``detect`` stops at its last watermark: events newer than it are held in state,
in event-time order, as they would be in a stream that goes on, so a finished run of
``detect`` must find exactly the second count, and Flink the first.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from make_sample_events import count_p1_then_p2_in_time_order
from patterns_bench import WITHIN
from sessions_bench import DELAY

# the window and the out-of-orderness that state_growth.py's detect runs use
WITHIN_MS = int(WITHIN.total_seconds() * 1000)
OUT_OF_ORDERNESS_MS = int(DELAY.total_seconds() * 1000)


def events_in_time_order(folder: Path) -> Iterator[tuple[str, int, int]]:
    """``(user_id, ts, page_number)`` of every event of the scale files in ``folder``, in file
    order, which is time order for ``SteadyTraffic``; raises if an event is older than one
    before it (the reference would then need the events sorted)."""
    newest = -1
    for path in sorted(folder.glob("events-*.jsonl")):
        with path.open() as lines:
            for line in lines:
                event = json.loads(line)
                ts = int(event["ts"])
                if ts < newest:
                    raise SystemExit(f"{path}: an event at {ts} follows one at {newest}")
                newest = ts
                yield event["user_id"], ts, int(event["page_number"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a dataset of bench/data/scale/")
    args = parser.parse_args(argv)
    # two passes over the files, not a list: 28M events at 5M keys would take gigabytes
    counted = {"events": 0, "newest_ms": 0}

    def counting(events: Iterator[tuple[str, int, int]]) -> Iterator[tuple[str, int, int]]:
        for event in events:
            counted["events"] += 1
            counted["newest_ms"] = event[1]
            yield event

    all_events = count_p1_then_p2_in_time_order(
        counting(events_in_time_order(args.folder)), WITHIN_MS
    )
    last_watermark = counted["newest_ms"] - OUT_OF_ORDERNESS_MS
    up_to_watermark = count_p1_then_p2_in_time_order(
        (e for e in events_in_time_order(args.folder) if e[1] <= last_watermark), WITHIN_MS
    )
    print(
        json.dumps(
            {
                "folder": args.folder.name,
                "events": counted["events"],
                "matches_all_events": all_events,
                "last_watermark_ms": last_watermark,
                "matches_up_to_last_watermark": up_to_watermark,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
