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

``state_growth.py --flink-sample-steady-events S`` does all of it in one command:
``sample_job`` starts the job, samples it the same way and stops it once the warm-up and S
steady events have reached the operator, and ``rate`` gives the figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale.common import FlinkRest, engine_process

SAMPLE_EVERY_S = 10


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs: neither gone nor exited and not yet reaped (a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def rest_of(pid: int) -> FlinkRest | None:
    """Flink's REST API on whichever port the JVM ``pid`` answers it; None if the JVM exits
    before it answers."""
    while alive(pid):
        listening = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
        for line in listening.splitlines():
            match = re.search(r":(\d+)$", line.split()[3]) if f"pid={pid}," in line else None
            if match is None:
                continue
            rest = FlinkRest(int(match.group(1)))
            if rest.get("/jobs") is not None:
                return rest
        time.sleep(1)
    return None


def samples_of(pid: int) -> Iterator[dict[str, Any]]:
    """A sample every ``SAMPLE_EVERY_S`` of the job in JVM ``pid`` (records in at its first
    keyed operator, checkpoint counts), until the JVM has gone."""
    rest = rest_of(pid)
    while rest is not None and alive(pid):
        yield sample(rest)
        time.sleep(SAMPLE_EVERY_S)


def sample(rest: FlinkRest) -> dict[str, Any]:
    """One sample of the running job: records in at its first keyed operator, the late records
    that operator dropped (``MATCH_RECOGNIZE``'s counter; None for an operator without it) and
    the job's checkpoint counts."""
    job, vertices = rest.job_id(), rest.vertices()
    metrics = (
        f"/jobs/{job}/vertices/{vertices[1]['id']}/subtasks/metrics" if len(vertices) > 1 else ""
    )
    records = rest.get(f"{metrics}?get=numRecordsIn") if metrics else None
    checkpoints = rest.checkpoints().get("counts")
    if records is None or checkpoints is None:
        return {"t": time.time(), "error": "the REST API did not answer"}
    # an operator's own metrics are named after it (``Match[6].numLateRecordsDropped``), and the
    # REST API answers nothing at all when one of the names asked for does not exist
    late = [m["id"] for m in rest.get(metrics) or () if m["id"].endswith(".numLateRecordsDropped")]
    dropped = rest.get(f"{metrics}?get={','.join(late)}") if late else None
    return {
        "t": time.time(),
        "records_in": records[0]["sum"] if records else None,
        "late_dropped": sum(m["sum"] for m in dropped) if dropped else None,
        "checkpoints": checkpoints,
    }


def watch(pid: int, out: Path) -> None:
    """Appends a sample every ``SAMPLE_EVERY_S`` until the JVM has gone."""
    with out.open("a") as samples:
        for row in samples_of(pid):
            samples.write(json.dumps(row) + "\n")
            samples.flush()


def java_child(parent: subprocess.Popen[str]) -> int | None:
    """The pid of the ``java`` process started by ``parent`` (PyFlink's gateway JVM, which
    runs the local mini-cluster and so the job); None once ``parent`` has exited without one
    (asked through ``poll``: an exited child stays in /proc until it is reaped)."""
    while parent.poll() is None:
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                fields = stat.read_text().rsplit(")", 1)
                if fields[0].endswith("(java") and int(fields[1].split()[1]) == parent.pid:
                    return int(stat.parent.name)
        time.sleep(1)
    return None


def sample_job(
    command: Sequence[str],
    log: Path,
    env: Mapping[str, str],
    warmup_events: float,
    steady_events: float,
) -> list[dict[str, Any]]:
    """Runs a Flink benchmark job (``command``, stderr to ``log``) and samples it until
    ``steady_events`` records have reached its first keyed operator since the first sample past
    its ``warmup_events``, then kills it; the samples (also written to ``log`` with the suffix
    ``.samples.jsonl``). A job that ends sooner is sampled to its end; one that fails is an
    error naming its log."""
    out = log.with_suffix(".samples.jsonl")
    rows: list[dict[str, Any]] = [{"t": time.time(), "started": True}]
    with engine_process(command, log, env) as child, out.open("w") as kept:
        kept.write(json.dumps(rows[0]) + "\n")
        jvm = java_child(child)
        steady_from: float | None = None
        for row in samples_of(jvm) if jvm is not None else ():
            rows.append(row)
            kept.write(json.dumps(row) + "\n")
            kept.flush()
            records = row.get("records_in") or 0
            if steady_from is None and records > warmup_events:
                steady_from = records
            if steady_from is not None and records - steady_from >= steady_events:
                break
        else:
            if child.wait() != 0:
                raise RuntimeError(f"{command[1:3]} failed (exit {child.returncode}); see {log}")
    return rows


def rate(samples: list[dict[str, Any]], after_events: float, batch_events: int) -> dict[str, Any]:
    """Events per second from the first sample past ``after_events`` to the last one that still
    read something new; ``warmup_seconds``, from the job's start (a ``started`` row, as
    ``sample_job`` writes) to that first sample, None without one."""
    read = [s for s in samples if s.get("records_in") is not None]
    past = [s for s in read if s["records_in"] > after_events]
    if len(past) < 2:
        raise SystemExit(
            f"fewer than two samples past {after_events:,.0f} events: the job's steady phase was "
            f"shorter than two samples ({SAMPLE_EVERY_S} s apart); give it more steady events"
        )
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
        "warmup_seconds": next((first["t"] - s["t"] for s in samples if s.get("started")), None),
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
