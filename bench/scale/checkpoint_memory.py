"""Checkpoint bytes per batch against keys changed per batch, metadata bytes per batch, and the
process's memory against the bound ``doctor`` computes (issue 21, questions 3 and 4).

Usage::

    .venv/bin/python bench/scale/checkpoint_memory.py [--keys 1000000]
        [--batch-events 5000,20000,100000] [--batches-each 10]

The pipeline of ``examples/pageviews.toml`` (its bounded RocksDB memory, 256 MiB for all
instances; its default driver heap; its 4 state partitions; its sinks; monitoring on, without
the Prometheus endpoint), run with ``streamwarden.pipeline.Pipeline`` in a process of its own
over steady traffic (``bench/scale/traffic.py``): a warm-up touching every one of ``--keys``
keys in files of 200k events, then ``--batches-each`` batches of each ``--batch-events`` size,
one landing file per micro-batch. A batch of B events touches min(B, N) distinct keys (round
robin), 2% of the keys are replaced every revisit period (15 minutes of event time).

After every batch it records:

* checkpoint bytes the batch wrote: the sizes of the files that appeared under the checkpoint's
  ``state/`` since the previous batch (RocksDB changelog files every batch; snapshots, their SST
  files and zips when the maintenance thread uploads one), and the batch's ``offsets/N`` and
  ``commits/N`` files (metadata) and the file source's log entry;
* the JVM's resident set (``VmRSS``) and peak (``VmHWM``) from /proc, and the state operator's
  ``memoryUsedBytes`` with the RocksDB custom metrics Spark reports.

Bytes and memory do not depend on the machine's load, so these figures are valid on a shared
machine (the times it also prints are not). Results: ``bench/results/scale-checkpoint-memory.json``
(``.json.gz`` once longer than about 2,000 lines; ``scale.common.save``) and a Markdown table
(``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale.common import (
    BENCH,
    DATA,
    PYTHON,
    RESULTS,
    ROOT,
    batch_row,
    proc_memory,
    run_json,
    save,
)
from scale.traffic import SteadyTraffic

EXAMPLE = ROOT / "examples" / "pageviews.toml"
MIB = 2**20


def write_schedule(traffic: SteadyTraffic, sizes: list[int], each: int, folder: Path) -> list[int]:
    """Warm-up files, then ``each`` files of every size in ``sizes``; returns the files' event
    counts. Files are written once per schedule (``_COMPLETE`` holds it)."""
    counts = [c for _, _, c in traffic.files()] + [s for s in sizes for _ in range(each)]
    marker = folder / "_COMPLETE"
    spec = json.dumps({"slots": traffic.slots, "counts": counts})
    if marker.exists() and marker.read_text() == spec:
        return counts
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    base = time.time() - 10 * len(counts)
    first = 0
    for n, count in enumerate(counts):
        path = folder / f"events-{n:06d}.jsonl"
        with path.open("w") as out:
            out.writelines(e.line() + "\n" for e in traffic.events(first, count))
        os.utime(path, (base + n, base + n))
        first += count
    marker.write_text(spec)
    return counts


def example_config(landing: Path, out: Path, conf: dict[str, str] | None = None) -> Any:
    """examples/pageviews.toml with this run's paths, one file per batch, no Prometheus port, and
    ``conf`` added to its Spark settings."""
    from streamwarden.config import parse_config

    data = tomllib.loads(EXAMPLE.read_text())
    data["source"].update(path=str(landing), max_files_per_trigger=1)
    data["sinks"]["sessions"]["path"] = str(out / "sessions")
    data["sinks"]["dead_letters"]["path"] = str(out / "dead_letters")
    data["checkpoint"]["path"] = str(out / "checkpoint")
    data["monitoring"]["prometheus_port"] = "off"
    data["spark"]["conf"].update(conf or {})
    return parse_config(data, origin=str(EXAMPLE))


def doctor_bound(config: Any) -> dict[str, int | None]:
    """What ``streamwarden doctor`` computes for this config's task process."""
    from streamwarden.doctor.memory import process_memory
    from streamwarden.spark.session import STATE_DEFAULTS

    mem = process_memory(config.spark.master, {**STATE_DEFAULTS, **config.spark.conf})
    return {
        "role": mem.role,  # type: ignore[dict-item]
        "heap": mem.heap,
        "overhead": mem.overhead,
        "total": mem.total,
        "rocksdb_cap": mem.rocksdb_cap,
        "container_memory": config.resources.container_memory,
    }


def files_now(folder: Path) -> dict[str, int]:
    return (
        {str(f): f.stat().st_size for f in folder.rglob("*") if f.is_file()}
        if folder.exists()
        else {}
    )


def one_run(args: argparse.Namespace) -> None:
    """In its own process: the pipeline over the landing folder, a JSON line of every batch."""
    from streamwarden.pipeline import Pipeline

    landing, out = Path(args.landing), Path(args.work)
    shutil.rmtree(out, ignore_errors=True)
    config = example_config(landing, out)
    pipeline = Pipeline(config)
    jvm = pipeline.spark._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    runtime = jvm.java.lang.Runtime.getRuntime()
    ck = out / "checkpoint"
    seen: dict[str, int] = {}
    rows: list[dict[str, Any]] = []

    def on_progress(progress: dict[str, Any], _stats: Any) -> None:
        now = files_now(ck)
        new = {p: s for p, s in now.items() if p not in seen or seen[p] != s}
        seen.clear()
        seen.update(now)
        state = {p: s for p, s in new.items() if "/state/" in p}
        bid = int(progress["batchId"])
        row = batch_row(progress)
        row.update(
            ck_state_new_bytes=sum(state.values()),
            ck_changelog_bytes=sum(s for p, s in state.items() if p.endswith(".changelog")),
            ck_snapshot_bytes=sum(s for p, s in state.items() if p.endswith((".zip", ".sst"))),
            ck_offsets_bytes=now.get(str(ck / "offsets" / str(bid)), 0),
            ck_commits_bytes=now.get(str(ck / "commits" / str(bid)), 0),
            ck_sources_new_bytes=sum(s for p, s in new.items() if "/sources/" in p),
            ck_state_dir_bytes=sum(s for p, s in now.items() if "/state/" in p),
            **proc_memory(pid),
            # the JVM heap's share of the RSS: committed (reserved from the OS) and in use
            heap_committed=int(runtime.totalMemory()),
            heap_used=int(runtime.totalMemory()) - int(runtime.freeMemory()),
        )
        rows.append(row)
        print(
            f"batch {bid}: {row['numInputRows']} rows, state rows {row['state_numRowsTotal']}, "
            f"state new {row['ck_state_new_bytes']:,} B, RSS {row['VmRSS'] / MIB:,.0f} MiB",
            file=sys.stderr,
            flush=True,
        )

    start = time.perf_counter()
    result = pipeline.run(once=True, on_progress=on_progress)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "doctor": doctor_bound(config),
                "batches": rows,
                "sessions": sum(b.session_rows for b in result.batches),
            }
        )
    )


def summarize(
    out: dict[str, Any], counts: list[int], warmup_files: int, keys: int
) -> list[dict[str, Any]]:
    """Per batch size of the steady phase: medians of the bytes written and memory."""
    data = [b for b in out["batches"] if b["numInputRows"] > 0]
    steady = data[warmup_files:]
    sizes = counts[warmup_files:]
    summary = []
    for size in dict.fromkeys(sizes):
        group = [b for b, s in zip(steady, sizes, strict=False) if s == size]
        med = lambda k, g=group: statistics.median(b[k] for b in g)  # noqa: E731
        summary.append(
            {
                "batch_events": size,
                "keys_changed": min(size, keys),
                "batches": len(group),
                "state_rows": med("state_numRowsTotal"),
                "state_rows_updated": med("state_numRowsUpdated"),
                "state_rows_removed": med("state_numRowsRemoved"),
                "changelog_bytes": med("ck_changelog_bytes"),
                "state_new_bytes_median": med("ck_state_new_bytes"),
                "state_new_bytes_mean": statistics.fmean(b["ck_state_new_bytes"] for b in group),
                "snapshot_batches": sum(1 for b in group if b["ck_snapshot_bytes"] > 0),
                "offsets_bytes": med("ck_offsets_bytes"),
                "commits_bytes": med("ck_commits_bytes"),
                "sources_bytes": med("ck_sources_new_bytes"),
                "rss_max": max(b["VmRSS"] for b in group),
                "memory_used_bytes": med("state_memoryUsedBytes"),
                "batch_ms": med("ms_triggerExecution"),
            }
        )
    return summary


def report(document: dict[str, Any]) -> str:
    keys, d = document["keys"], document["doctor"]
    lines = [
        f"{keys:,} open keys, examples/pageviews.toml's settings; steady batches, medians per "
        "size:",
        "",
        "| events per batch | keys changed | state rows | rows updated | rows removed "
        "| changelog B "
        "| state B written (median / mean) | B per key changed | snapshot batches | offsets B "
        "| commits B | source log B | batch ms (loaded machine) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in document["summary"]:
        lines.append(
            f"| {s['batch_events']:,} | {s['keys_changed']:,} | {s['state_rows']:,.0f} "
            f"| {s['state_rows_updated']:,.0f} | {s['state_rows_removed']:,.0f} "
            f"| {s['changelog_bytes']:,.0f} | {s['state_new_bytes_median']:,.0f} / "
            f"{s['state_new_bytes_mean']:,.0f} "
            f"| {s['state_new_bytes_median'] / s['keys_changed']:,.1f} "
            f"| {s['snapshot_batches']} of {s['batches']} | {s['offsets_bytes']:,.0f} "
            f"| {s['commits_bytes']:,.0f} | {s['sources_bytes']:,.0f} | {s['batch_ms']:,.0f} |"
        )
    m = document["memory"]
    lines += [
        "",
        "| memory | MiB |",
        "|---|---:|",
        f"| doctor: heap (spark.driver.memory) | {d['heap'] / MIB:,.0f} |",
        f"| doctor: overhead (native memory reserved) | {d['overhead'] / MIB:,.0f} |",
        f"| doctor: the process's bound, heap + overhead | {d['total'] / MIB:,.0f} |",
        f"| doctor: RocksDB cap (maxMemoryUsageMB, bounded) "
        f"| {(d['rocksdb_cap'] or 0) / MIB:,.0f} |",
        f"| resources.container_memory | {(d['container_memory'] or 0) / MIB:,.0f} |",
        f"| JVM peak RSS (VmHWM) over the run | {m['peak_rss'] / MIB:,.0f} |",
        f"| JVM RSS at the last batch | {m['last_rss'] / MIB:,.0f} |",
        f"| JVM heap committed, max over batches | {_mib(m.get('heap_committed_max'))} |",
        f"| RocksDB memoryUsedBytes, max over batches (sum of partitions) "
        f"| {m['rocksdb_max'] / MIB:,.0f} |",
    ]
    return "\n".join(lines) + "\n"


def _mib(value: int | None) -> str:
    return f"{value / MIB:,.0f}" if value else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    run = sub.add_parser("run", help="internal: one pipeline run")
    run.add_argument("--landing", required=True)
    run.add_argument("--work", required=True)
    ints = lambda text: [int(x) for x in text.split(",")]  # noqa: E731
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--batch-events", type=ints, default=[5_000, 20_000, 100_000])
    parser.add_argument("--batches-each", type=int, default=10)
    parser.add_argument("--name", default="scale-checkpoint-memory")
    args = parser.parse_args()
    if args.mode == "run":
        one_run(args)
        return
    traffic = SteadyTraffic(slots=args.keys, batch_events=max(args.batch_events), steady_batches=0)
    landing = DATA / f"checkpoint-n{args.keys}" / "landing"
    counts = write_schedule(traffic, args.batch_events, args.batches_each, landing)
    work = BENCH / "out" / "scale" / f"checkpoint-n{args.keys}"
    command = [str(PYTHON), __file__, "run", "--landing", str(landing), "--work", str(work)]
    out = run_json(command, work.with_suffix(".log"))
    data = [b for b in out["batches"] if b["numInputRows"] > 0]
    document = {
        "args": vars(args),
        "keys": args.keys,
        "doctor": out["doctor"],
        "seconds": out["seconds"],
        "summary": summarize(out, counts, traffic.warmup_files, args.keys),
        "memory": {
            "peak_rss": max(b["VmHWM"] for b in out["batches"]),
            "last_rss": data[-1]["VmRSS"],
            "rocksdb_max": max(b["state_memoryUsedBytes"] for b in out["batches"]),
            "heap_committed_max": max(b.get("heap_committed", 0) for b in out["batches"]),
            "custom_metrics_last": data[-1]["custom"],
        },
        "batches": out["batches"],
    }
    save(args.name, document)
    text = report(document)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
