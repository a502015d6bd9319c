"""Restart time with N keys of state (issue 21, question 2): SIGKILL a running pipeline, start it
again on the same checkpoint, and time until the first new batch is committed.

Usage::

    .venv/bin/python bench/scale/restart.py [--keys 1000000]
        [--variants default,deltas50,maintenance15s,noarchive]

For every variant (Spark state-store settings), in processes of their own:

1. **fill**: the pipeline of ``examples/pageviews.toml`` (``bench/scale/checkpoint_memory.py``'s
   config: its bounded RocksDB memory, 4 state partitions, 5 s trigger) runs continuously over
   the steady traffic of ``bench/scale/traffic.py`` (a warm-up touching all N keys, then
   ``--steady-batches`` files of ``--batch-events``); when every file is committed and the query
   is idle, the whole process group (Python and its JVM) gets SIGKILL;
2. **restart**: one new landing file (``--batch-events`` events, the traffic's continuation)
   arrives, the pipeline starts again on the same checkpoint, and the time from the process's
   start until the new file's batch is committed (``commits/<id>`` appears) is the restart time;
3. **baseline**: the same start and the same one-file batch on a fresh checkpoint (no state):
   the part of the restart any start pays (Python, JVM, Spark, query planning). restart minus
   baseline is the cost of bringing the state back (RocksDB snapshot download + changelog
   replay).

It also counts, in each phase's log, Spark's warnings about state stores lagging behind their
snapshot uploads, and reports the checkpoint's snapshot and changelog files at the kill.

Flink (variants ``flink-heap`` and ``flink-rocksdb``) goes through the same three phases with
``bench/scale/flink_live.py``: a never-ending Flink SQL sessions job over the same files, then
watching a folder for new files, checkpointing every 2 s (RocksDB incrementally) to a retained
checkpoint folder. The fill ends when the source has read every event and a checkpoint has
completed after that; then SIGKILL. The restart starts the job from the retained checkpoint
(``execution.state-recovery.path``) with the new file in the watched folder; its time runs from
the process's start until the source has read the new file's events and a checkpoint has
completed after that (every task restored and running, and the new events' state made
durable: Flink's counterpart of a committed batch). Both are read from Flink's REST API. The
baseline is the same job with no state and only the new file.

Results: ``bench/results/scale-restart.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale.checkpoint_memory import example_config
from scale.common import (
    BENCH,
    FLINK_PYTHON,
    PYTHON,
    RESULTS,
    dataset,
    folder_bytes,
    save,
)
from scale.flink_job import FlinkJob, kill, retained_checkpoint, wait_until
from scale.traffic import SteadyTraffic

#: Spark state-store settings per variant (on top of examples/pageviews.toml's).
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "deltas50": {"spark.sql.streaming.stateStore.minDeltasForSnapshot": "50"},
    "deltas5": {"spark.sql.streaming.stateStore.minDeltasForSnapshot": "5"},
    "maintenance15s": {"spark.sql.streaming.stateStore.maintenanceInterval": "15s"},
    # the JVM's own class sharing named in the driver's options: streamwarden then maps no class
    # archive (spark/class_archive.py), so the JVM starts as it did before 2026-11-27
    "noarchive": {"spark.driver.extraJavaOptions": "-Xshare:auto"},
}
#: Flink variants: the state backend of bench/scale/flink_live.py.
FLINK_VARIANTS = {"flink-heap": "heap", "flink-rocksdb": "rocksdb"}
#: Spark's warnings that a state store is behind on snapshots (coordinator or provider).
LAG = re.compile(r"snapshot.*(lag|behind)|(lag|behind).*snapshot", re.IGNORECASE)


def serve(args: argparse.Namespace) -> None:
    """In its own process: the pipeline, continuously, until killed."""
    from streamwarden.pipeline import Pipeline

    conf = dict(c.split("=", 1) for c in args.conf)
    Pipeline(example_config(Path(args.landing), Path(args.work), conf)).run(once=False)


def committed(checkpoint: Path) -> int:
    """The highest committed batch id, -1 if none."""
    ids = [int(p.name) for p in (checkpoint / "commits").glob("*") if p.name.isdigit()]
    return max(ids, default=-1)


def committed_file(checkpoint: Path, name: str) -> bool:
    """Whether the batch that read landing file ``name`` is committed: the file source's log
    (``sources/0/<id>``, or a compacted ``<id>.compact`` holding all entries up to ``<id>``)
    names the file, and ``commits/<id>`` exists. Idle ticks are batches too: they do not count."""
    for entry in (checkpoint / "sources" / "0").glob("*"):
        stem = entry.name.removesuffix(".compact")
        if stem.isdigit() and name in entry.read_text(errors="replace"):
            if entry.name.endswith(".compact"):
                return committed(checkpoint) >= int(stem)
            return (checkpoint / "commits" / stem).exists()
    return False


def logged(checkpoint: Path) -> int:
    ids = [int(p.name) for p in (checkpoint / "offsets").glob("*") if p.name.isdigit()]
    return max(ids, default=-1)


def start(landing: Path, work: Path, conf: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    command = [str(PYTHON), __file__, "serve", "--landing", str(landing), "--work", str(work)]
    command += [f"--conf={k}={v}" for k, v in conf.items()]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=out, start_new_session=True)


def lag_warnings(log: Path) -> int:
    return sum(1 for line in log.read_text(errors="replace").splitlines() if LAG.search(line))


def state_files(checkpoint: Path) -> dict[str, int]:
    files = [f for f in (checkpoint / "state").rglob("*") if f.is_file()]
    return {
        "changelog_files": sum(1 for f in files if f.name.endswith(".changelog")),
        "snapshot_zips": sum(1 for f in files if f.name.endswith(".zip")),
        "sst_files": sum(1 for f in files if f.name.endswith(".sst")),
        "state_bytes": sum(f.stat().st_size for f in files),
    }


def one_file_batch(traffic: SteadyTraffic, landing: Path, name: str) -> None:
    """The traffic's next B events as one new landing file (written, then renamed in)."""
    first = traffic.total_events
    tmp = landing.parent / f".{name}.tmp"
    with tmp.open("w") as out:
        out.writelines(e.line() + "\n" for e in traffic.events(first, traffic.batch_events))
    tmp.rename(landing / name)


def variant_run(name: str, traffic: SteadyTraffic, deadline: float) -> dict[str, Any]:
    work = BENCH / "out" / "scale" / f"restart-n{traffic.slots}-{name}"
    shutil.rmtree(work, ignore_errors=True)
    landing = work / "landing"
    landing.mkdir(parents=True)
    for f in sorted(dataset(traffic).glob("events-*.jsonl")):
        shutil.copy2(f, landing / f.name)
    files = len(list(landing.glob("*.jsonl")))
    ck = work / "checkpoint"
    conf = VARIANTS[name]
    # 1. fill, then SIGKILL once all files are committed and nothing is in flight
    fill_log = work / "fill.log"
    t0 = time.perf_counter()
    proc = start(landing, work, conf, fill_log)
    wait_until(
        lambda: committed(ck) + 1 >= files and committed(ck) == logged(ck),
        proc,
        deadline,
        "the fill",
    )
    fill_s = time.perf_counter() - t0
    kill(proc)  # as soon as idle: the maintenance thread may be mid-upload, as in life
    at_kill = {"last_committed": committed(ck), **state_files(ck)}
    # 2. restart with one new file
    new_file = f"events-{files:06d}-after-kill.jsonl"
    one_file_batch(traffic, landing, new_file)
    restart_log = work / "restart.log"
    t0 = time.perf_counter()
    proc = start(landing, work, conf, restart_log)
    restart_s = wait_until(lambda: committed_file(ck, new_file), proc, deadline, "the restart")
    kill(proc)
    # 3. baseline: the same one-file batch on a fresh checkpoint
    base = work / "baseline"
    (base / "landing").mkdir(parents=True)
    shutil.copy2(landing / new_file, base / "landing")
    base_log = work / "baseline.log"
    proc = start(base / "landing", base, conf, base_log)
    baseline_s = wait_until(
        lambda: committed_file(base / "checkpoint", new_file), proc, deadline, "the baseline"
    )
    kill(proc)
    return {
        "variant": name,
        "conf": conf,
        "fill_seconds": fill_s,
        "restart_seconds": restart_s,
        "baseline_seconds": baseline_s,
        "restore_seconds": restart_s - baseline_s,
        "at_kill": at_kill,
        "lag_warnings": {
            "fill": lag_warnings(fill_log),
            "restart": lag_warnings(restart_log),
        },
    }


# --- Flink -----------------------------------------------------------------------------------


def flink_variant_run(name: str, traffic: SteadyTraffic, deadline: float) -> dict[str, Any]:
    if not FLINK_PYTHON.exists():
        raise SystemExit(f"{name}: run bench/setup_flink.sh first")
    state = FLINK_VARIANTS[name]
    work = BENCH / "out" / "scale" / f"restart-n{traffic.slots}-{name}"
    shutil.rmtree(work, ignore_errors=True)
    live, checkpoints = work / "live", work / "checkpoints"
    live.mkdir(parents=True)
    inputs = dataset(traffic)
    # 1. fill: every file read and checkpointed, then SIGKILL
    t0 = time.perf_counter()
    job = FlinkJob(state, inputs, live, checkpoints, work / "fill.log")
    job.wait_read_and_checkpointed(traffic.total_events, deadline, "the Flink fill")
    fill_s = time.perf_counter() - t0
    at_kill_checkpoint = job.completed_since(0) or {}
    job.kill()
    restore = retained_checkpoint(checkpoints)
    at_kill = {
        "checkpoint": restore.name,
        "state_bytes": folder_bytes(checkpoints),
        "checkpointed_size": at_kill_checkpoint.get("checkpointed_size"),
        "state_size": at_kill_checkpoint.get("state_size"),
    }
    # 2. restart from the retained checkpoint, with one new file
    new_file = "events-after-kill.jsonl"
    one_file_batch(traffic, live, new_file)
    job = FlinkJob(state, inputs, live, checkpoints, work / "restart.log", restore=restore)
    restart_s = job.wait_read_and_checkpointed(traffic.batch_events, deadline, "the Flink restart")
    restored = (job.checkpoints().get("latest") or {}).get("restored")
    job.kill()
    if not restored:
        raise RuntimeError(f"{name}: the restarted job did not restore {restore}")
    # 3. baseline: no state, only the new file
    base = work / "baseline"
    (base / "live").mkdir(parents=True)
    shutil.copy2(live / new_file, base / "live")
    job = FlinkJob(state, base / "none", base / "live", base / "checkpoints", work / "baseline.log")
    baseline_s = job.wait_read_and_checkpointed(traffic.batch_events, deadline, "the baseline")
    job.kill()
    return {
        "variant": name,
        "conf": {"state.backend.type": state},
        "fill_seconds": fill_s,
        "restart_seconds": restart_s,
        "baseline_seconds": baseline_s,
        "restore_seconds": restart_s - baseline_s,
        "at_kill": at_kill,
        "restored": restored,
    }


def report(document: dict[str, Any]) -> str:
    lines = [
        f"{document['keys']:,} keys of state; seconds from process start to the new batch "
        "committed (one run per variant):",
        "",
        "| variant | settings | restart s | baseline s (no state) | restore s (difference) "
        "| snapshots / changelogs at kill | state MB | snapshot-lag warnings (fill, restart) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in document["results"]:
        k = r["at_kill"]
        settings = ", ".join(f"{key.rsplit('.', 1)[1]}={v}" for key, v in r["conf"].items()) or "-"
        files = (
            f"{k['snapshot_zips']} / {k['changelog_files']}"
            if "snapshot_zips" in k
            else f"Flink {k['checkpoint']}"
        )
        lag = r.get("lag_warnings")
        warnings = f"{lag['fill']}, {lag['restart']}" if lag else "-"
        lines.append(
            f"| {r['variant']} | {settings} | {r['restart_seconds']:.1f} "
            f"| {r['baseline_seconds']:.1f} "
            f"| {r['restore_seconds']:.1f} | {files} "
            f"| {k['state_bytes'] / 1e6:,.1f} "
            f"| {warnings} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    run = sub.add_parser("serve", help="internal: the pipeline, continuously")
    run.add_argument("--landing", required=True)
    run.add_argument("--work", required=True)
    run.add_argument("--conf", action="append", default=[])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--batch-events", type=int, default=20_000)
    parser.add_argument("--steady-batches", type=int, default=30)
    parser.add_argument(
        "--variants", default="default,deltas50,maintenance15s,flink-heap,flink-rocksdb"
    )
    parser.add_argument("--deadline", type=float, default=3600, help="seconds per phase")
    parser.add_argument("--name", default="scale-restart")
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args)
        return
    traffic = SteadyTraffic(
        slots=args.keys, batch_events=args.batch_events, steady_batches=args.steady_batches
    )
    results = []
    for name in (v.strip() for v in args.variants.split(",")):
        run = flink_variant_run if name in FLINK_VARIANTS else variant_run
        results.append(run(name, traffic, args.deadline))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    document = {"args": vars(args), "keys": args.keys, "results": results}
    save(args.name, document)
    text = report(document)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
