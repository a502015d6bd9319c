"""A Flink job's event rate over time, read from its REST API: for jobs too long to run twice.

Usage::

    .venv/bin/python bench/scale/flink_rate.py watch --pid JVM_PID --out SAMPLES.jsonl
    .venv/bin/python bench/scale/flink_rate.py rate SAMPLES.jsonl --after-events 15000000 \\
        [--batch-events 50000]

``state_growth.py`` gets Flink's per-batch figure from two whole jobs (warm-up alone, then
warm-up + steady phase). At 5M keys on RocksDB one job takes 15 minutes and more, so the second
job is replaced by sampling: ``watch`` finds the REST port of a local Flink job's JVM (a
``bench/flink_sessions.py`` run) and every 10 s appends the records that have reached its first
keyed operator (``numRecordsIn`` of the job's second vertex, summed over subtasks) and its
checkpoint counts; ``rate`` gives the events per second between the first sample past
``--after-events`` (the warm-up's events) and the last sample still reading, and the
per-batch equivalent (``--batch-events`` / rate). Checkpoints are included, as in the
two-job figure; the final flush at end of input is not.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

SAMPLE_EVERY_S = 10
#: What asking a port that is not Flink's REST API (the JVM's py4j port, say) can raise.
NOT_REST = (OSError, http.client.HTTPException, ValueError)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=3) as response:
        return json.load(response)


def rest_port(pid: int) -> int:
    """The port on which the JVM ``pid`` answers Flink's ``/jobs/overview``."""
    while True:
        listening = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
        for line in listening.splitlines():
            if f"pid={pid}," not in line:
                continue
            match = re.search(r":(\d+)$", line.split()[3])
            if match is None:
                continue
            try:
                _get(f"http://127.0.0.1:{match.group(1)}/jobs/overview")
            except NOT_REST:
                continue
            return int(match.group(1))
        time.sleep(1)


def watch(pid: int, out: Path) -> None:
    """Appends a sample every ``SAMPLE_EVERY_S`` until the JVM has gone."""
    base = f"http://127.0.0.1:{rest_port(pid)}"
    with out.open("a") as samples:
        while Path(f"/proc/{pid}").exists():
            try:
                job = _get(f"{base}/jobs/overview")["jobs"][0]["jid"]
                vertex = _get(f"{base}/jobs/{job}")["vertices"][1]["id"]
                metric = _get(
                    f"{base}/jobs/{job}/vertices/{vertex}/subtasks/metrics?get=numRecordsIn"
                )
                checkpoints = _get(f"{base}/jobs/{job}/checkpoints")["counts"]
                row = {
                    "t": time.time(),
                    "records_in": metric[0]["sum"] if metric else None,
                    "checkpoints": checkpoints,
                }
            except NOT_REST as error:
                row = {"t": time.time(), "error": repr(error)}
            samples.write(json.dumps(row) + "\n")
            samples.flush()
            time.sleep(SAMPLE_EVERY_S)


def rate(samples: list[dict[str, Any]], after_events: float, batch_events: int) -> dict[str, Any]:
    """Events per second from the first sample past ``after_events`` to the last one that still
    read something new."""
    read = [s for s in samples if s.get("records_in") is not None]
    past = [s for s in read if s["records_in"] > after_events]
    if len(past) < 2:
        raise SystemExit(f"fewer than two samples past {after_events:,.0f} events")
    last = max(past, key=lambda s: (s["records_in"], -s["t"]))
    first = past[0]
    seconds = last["t"] - first["t"]
    events = last["records_in"] - first["records_in"]
    per_s = events / seconds
    return {
        "from_events": first["records_in"],
        "to_events": last["records_in"],
        "seconds": seconds,
        "events_per_s": per_s,
        "per_batch_ms": 1000 * batch_events / per_s,
        "checkpoints_completed": last["checkpoints"]["completed"]
        - first["checkpoints"]["completed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    w = sub.add_parser("watch")
    w.add_argument("--pid", type=int, required=True)
    w.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("rate")
    r.add_argument("samples", type=Path)
    r.add_argument("--after-events", type=float, required=True)
    r.add_argument("--batch-events", type=int, default=50_000)
    args = parser.parse_args()
    if args.mode == "watch":
        watch(args.pid, args.out)
    else:
        rows = [json.loads(line) for line in args.samples.read_text().splitlines() if line]
        print(json.dumps(rate(rows, args.after_events, args.batch_events), indent=2))


if __name__ == "__main__":
    sys.exit(main())
