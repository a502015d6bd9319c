"""Cost per micro-batch as the open state grows (issue 21, question 1), and its fixed part.

Usage::

    .venv/bin/python bench/scale/state_growth.py [--keys 10000,100000,1000000,5000000]
        [--batch-events 5000,50000] [--steady-batches 40] [--workload sessions|patterns]
        [--engines sessionize,session_window,flink-heap,flink-rocksdb]

For every open-key count N and batch size B (varied independently) it writes the steady traffic
of ``bench/scale/traffic.py`` (a warm-up touching all N keys in files of 200k events, then
``--steady-batches`` files of B events that keep N keys active, 2% of them replaced by new keys
every revisit period, so timers fire and state rows are removed), then runs every engine on the
same files, each in a process (JVM) of its own:

sessions (``--workload sessions``)
  ``sessionize``      streamwarden's sessions (RocksDB state, the project's Spark defaults)
  ``session_window``  Spark's native session window producing the same session row
                      (``sessions_bench.py``'s (b=))
  ``read_validate``   the same source and validation with no state and the same counting sink:
                      the cost of a micro-batch of B rows before any state (``sessions_bench``'s
                      (a))
  ``flink-heap``, ``flink-rocksdb``  Flink SQL session windows (``bench/flink_sessions.py``)
                      with exactly-once checkpoints every 2 s (RocksDB's incremental, as
                      a job holding millions of keys is run; ``--flink-full-checkpoints``
                      for full ones, how the runs before 2026-11-26 13:30 were made)
patterns (``--workload patterns``, page 1 then page 2 of the same user within 30 minutes; the
traffic alternates pages 1, 2 per key, so about half the keys hold a partial match)
  ``detect``          streamwarden's ``detect``
  ``flink-match``     Flink SQL ``MATCH_RECOGNIZE`` on heap, checkpoints every 2 s
                      (``bench/flink_patterns.py``)
  ``flink-match-rocksdb``  the same on RocksDB (incremental checkpoints, small write buffers:
                      ``CEP_ROCKSDB_CONF``); only when named in ``--engines``, and with
                      ``--flink-sample-steady-events``: at 0.3-0.4 ms per event a
                      two-job run takes 15 minutes per job at 10k keys, and the warm-up of
                      1M keys alone 18 minutes (bench/notes/scale.md, "Q1 on 2026-11-27")

The measured batches are the last quarter of the steady ones, and at least one deadline-timer
cycle (30 minutes of event time, ``CYCLE``); the steady phase is made long enough (at 1M keys
and 5k-event batches, 534 batches) and the warm-up long enough (``--warmup-revisits``, by
default ``settling_warmup``) that the measured batches lie past every key's first deadline:
deadline timers fire and retired keys' sessions close at their steady rates there. A first full
run with a one-touch warm-up and 40 steady batches measured 1M keys and 5k-event batches before
any session had ever closed (40 batches are 3 minutes of event time), which flattered every
engine that defers work to timers.

Spark engines read one file per micro-batch (``maxFilesPerTrigger`` 1). Their per-batch time is
the mean of ``triggerExecution`` over the measured batches, broken into the parts of
``durationMs`` and the state operator's update, removal and commit times (means too); the median
of the last quarter is kept beside it.

Flink has no micro-batches: it runs the same job twice in fresh JVMs, once on the warm-up files
alone and once on warm-up + steady files, and its per-batch-equivalent time is the difference of
the two jobs' net runtimes divided by the number of steady batches: the marginal cost of B more
events with N keys open, checkpoints included (both jobs also pay the final flush of the open
sessions at end of input, which the difference cancels). It is a throughput figure, not a
latency: a live Flink job processes each event as it comes.

With ``--flink-sample-steady-events S`` Flink runs once instead, on warm-up + steady files,
sampled every 10 s through its REST API (``scale/flink_rate.py``) and stopped once S events
have reached its first keyed operator since the first sample past the warm-up: the figure is B
divided by the event rate from that sample to the last one, checkpoints included.
With ``--flink-warmup-on-heap`` too, a RocksDB engine's warm-up runs on Flink's heap backend and
a savepoint carries its state to the RocksDB job that is sampled (``scale/flink_transfer.py``).

The difference is only meaningful when the steady phase takes well longer than the run-to-run
noise of a job's start and final flush (seconds): so Flink gets the same stream prolonged to at
least ``--flink-min-steady-events`` (default 2M) steady events, in more files of B events, and the
difference is divided by its own number of steady batches. A validation run at 10k keys, B = 5k
and 8 steady batches (40k events) gave Flink per-batch figures within its noise (80 ms one run,
1.2 s and 5.5 s others): small steady phases do not measure Flink.

Per (engine, N), the per-batch times over the batch sizes are fitted with ``time = a + b*rows``:
``a`` is the fixed cost of a micro-batch at that state size, ``b`` the cost per input row.

Results: ``bench/results/scale-state-growth[-patterns].json`` (``.json.gz`` once longer than
about 2,000 lines: every batch of every run; ``scale.common.save``), a Markdown table printed
(and written to ``.md`` beside it: the summary) and a plot (``.png``, matplotlib).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale.common import (
    BENCH,
    DURATION_PARTS,
    FLINK_PYTHON,
    PYTHON,
    RESULTS,
    batch_row,
    dataset,
    fit_line,
    flink_jvm_env,
    gc_summary,
    last_quarter_median,
    load,
    results_file,
    run_json,
    save,
    tail_mean,
)
from scale.flink_rate import rate, sample_job
from scale.flink_transfer import transferred
from scale.traffic import SteadyTraffic, cycle_batches, settling_warmup

SPARK_ENGINES = {
    "sessions": ("sessionize", "session_window", "read_validate"),
    "patterns": ("detect",),
}
FLINK_ENGINES = {
    "sessions": ("flink-heap", "flink-rocksdb"),
    "patterns": ("flink-match", "flink-match-rocksdb"),
}
#: The engines a run without ``--engines`` leaves out: Flink's CEP operator on RocksDB takes
#: 0.3-0.4 ms per event, so the default sizes' warm-ups alone would take hours (15M events at 5M
#: keys).
NOT_BY_DEFAULT = ("flink-match-rocksdb",)
#: Flink's CEP operator on RocksDB with small write buffers, without which its prefix seeks
#: wade through its own delete tombstones (``bench/flink_patterns.py``'s docstring).
CEP_ROCKSDB_CONF = (
    "state.backend.rocksdb.memory.managed=false",
    "state.backend.rocksdb.writebuffer.size=64kb",
)
CHECKPOINT_EVERY = "2s"
#: A session's (and a partial match's) deadline: the 30-minute gap (``within``) plus the minute
#: of allowed lateness (``sessions_bench.GAP + DELAY``).
DEADLINE = timedelta(minutes=31)
#: The period of the deadline-timer waves. streamwarden keeps a key's timer until it comes due
#: and then moves it to the session's new deadline (TimerPolicy), so an active key touched every
#: 15 minutes has its timer fire about every second touch; the traffic's regularity lines those
#: firings up into waves with a 30-minute period (e.g. 4,300 then 200 timers per batch at 10k
#: keys and 7.5 minutes per batch). A per-batch figure averages whole cycles, or it measures a
#: phase: the first runs' last-quarter median at 1M keys and 5k-event batches (0.75 minutes of
#: event time) sampled 200 firings per batch where the long-run rate is ~2,500.
CYCLE = timedelta(minutes=30)


# --- one Spark engine run, in its own process ----------------------------------------------


def spark_run(args: argparse.Namespace) -> None:
    """Runs one Spark engine over ``args.input`` (one file per batch) and prints a JSON line."""
    from patterns_bench import MatchCount, p1_then_p2
    from pyspark.sql import functions as F
    from sessions_bench import (
        DELAY,
        GAP,
        SCHEMA,
        Totals,
        native_same_output,
        source,
        valid_events,
    )

    from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES
    from streamwarden.operators.patterns import detect
    from streamwarden.operators.sessions import SessionParams
    from streamwarden.operators.sessions.api import sessionize_records
    from streamwarden.spark.session import build_spark_session
    from streamwarden.validation.validate import TS_MS

    spark = build_spark_session(
        app_name=f"scale-{args.engine}",
        shuffle_partitions=args.shuffle_partitions,
        extra_conf={
            "spark.driver.memory": args.driver_memory,
            "spark.sql.streaming.numRecentProgressUpdates": "100000",
            **dict(c.split("=", 1) for c in args.conf),
        },
    )
    path, work = Path(args.input), Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    sink: Any
    if args.engine == "sessionize":
        params = SessionParams(gap=GAP, max_out_of_orderness=DELAY, aggregates=PAGEVIEW_AGGREGATES)
        result = sessionize_records(source(spark, path, 1), SCHEMA, params)
        frame, sink = result.combined, Totals("event_count", where="kind = 'session'")
    elif args.engine == "session_window":
        frame, sink = native_same_output(spark, path, 1), Totals("event_count")
    elif args.engine == "read_validate":
        # the same micro-batches with no state: what any query on this source pays per batch
        frame = valid_events(spark, path, 1).withColumn("one", F.lit(1))
        sink = Totals("one")
    elif args.engine == "detect":
        events = valid_events(spark, path, 1).select(
            "user_id", F.col(TS_MS).alias("ts"), "page_number"
        )
        frame, sink = detect(events, p1_then_p2(), key="user_id", time="ts").combined, MatchCount()
    else:
        raise SystemExit(f"unknown engine {args.engine}")
    spark.streams.addListener(batch_log(work.with_suffix(".batches.jsonl")))
    start = time.perf_counter()
    query = (
        frame.writeStream.option("checkpointLocation", str(work / "checkpoint"))
        .foreachBatch(sink)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seconds = time.perf_counter() - start
    if query.exception():
        raise RuntimeError(str(query.exception()))
    rows = [batch_row(p) for p in query.recentProgress]
    outputs = getattr(sink, "sessions", None) or getattr(sink, "matches", None)
    print(
        json.dumps({"engine": args.engine, "seconds": seconds, "outputs": outputs, "batches": rows})
    )
    spark.stop()


def batch_log(path: Path) -> Any:
    """A StreamingQueryListener that appends each batch's ``batch_row`` to the JSON-lines file
    ``path`` as the batch ends: a run stopped before its end (hours, at 5M keys and small
    batches) keeps the batches it measured (``--partial`` reads them)."""
    from pyspark.sql.streaming import StreamingQueryListener

    class BatchLog(StreamingQueryListener):  # type: ignore[misc]
        def __init__(self) -> None:
            self.out = path.open("w")

        def onQueryStarted(self, event: Any) -> None:
            return None

        def onQueryProgress(self, event: Any) -> None:
            self.out.write(json.dumps(batch_row(json.loads(event.progress.json))) + "\n")
            self.out.flush()

        def onQueryIdle(self, event: Any) -> None:
            return None

        def onQueryTerminated(self, event: Any) -> None:
            self.out.close()

    return BatchLog()


def partial(args: argparse.Namespace) -> None:
    """Figures of a Spark engine run stopped before its end, from its per-batch log: the means
    over the settled steady batches it reached (those past the full run's first measured batch,
    where every key's first deadline has passed). Printed as JSON; measures nothing."""
    n, b = args.keys[0], args.batch_events[0]
    traffic = point_traffic(n, b, args)
    log = BENCH / "out" / "scale" / f"{dataset(traffic).name}-{args.engines}.batches.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    steady = [r for r in rows if r["numInputRows"] > 0][traffic.warmup_files :]
    steady_count = traffic.steady_batches
    first = steady_count - measured_batches(traffic)
    settled = steady[first:]
    if not settled:
        raise SystemExit(f"{len(steady)} steady batches logged; none past batch {first}")
    figures = steady_figures(settled, len(settled))
    print(
        json.dumps(
            {
                "keys": n,
                "batch_events": b,
                "engine": args.engines,
                "steady_batches_logged": len(steady),
                "steady_batches_planned": steady_count,
                "settled_from": first,
                **figures,
            },
            indent=2,
        )
    )


# --- the driver ------------------------------------------------------------------------------


def spark_engine(
    engine: str, traffic: SteadyTraffic, path: Path, args: argparse.Namespace
) -> dict[str, Any]:
    work = BENCH / "out" / "scale" / f"{path.name}-{engine}"
    command = [
        str(PYTHON),
        __file__,
        "spark-run",
        "--engine",
        engine,
        "--input",
        str(path),
        "--work",
        str(work),
        "--shuffle-partitions",
        str(args.shuffle_partitions),
        "--driver-memory",
        args.driver_memory,
        *[f"--conf={c}" for c in args.conf],
    ]
    out = run_json(command, work.with_suffix(".log"))
    data = [b for b in out["batches"] if b["numInputRows"] > 0]
    steady = data[traffic.warmup_files :]
    if len(steady) != traffic.steady_batches:
        raise RuntimeError(
            f"{engine}: {len(steady)} steady batches, expected {traffic.steady_batches}"
        )
    summary: dict[str, Any] = steady_figures(steady, measured_batches(traffic))
    summary.update(
        no_data_batches=len(out["batches"]) - len(data),
        warmup_seconds=sum(b["ms_triggerExecution"] for b in data[: traffic.warmup_files]) / 1000,
        seconds=out["seconds"],
        outputs=out["outputs"],
    )
    return {"summary": summary, "batches": out["batches"]}


def measured_batches(traffic: SteadyTraffic) -> int:
    """How many of the last steady batches the figures average: a quarter, and at least one
    deadline-timer cycle (``CYCLE``) of event time."""
    cycle = cycle_batches(traffic.slots, traffic.batch_events, CYCLE, traffic.revisit)
    return max(traffic.steady_batches // 4, cycle)


def steady_batch_count(n: int, b: int, at_least: int) -> int:
    """Steady batches for N keys and B events per batch: ``at_least``, and enough that one
    deadline-timer cycle is at most the last three quarters of them."""
    return max(at_least, -(-cycle_batches(n, b, CYCLE) * 4 // 3))


def point_traffic(n: int, b: int, args: argparse.Namespace) -> SteadyTraffic:
    """The traffic of the point (N keys, B events per batch): its steady batches
    (``steady_batch_count``) and warm-up (``--warmup-revisits`` or ``settling_warmup``)."""
    steady = steady_batch_count(n, b, args.steady_batches)
    traffic = SteadyTraffic(slots=n, batch_events=b, steady_batches=steady)
    warmup = args.warmup_revisits or settling_warmup(
        n, b, steady, DEADLINE, measured=measured_batches(traffic)
    )
    return dataclasses.replace(traffic, warmup_revisits=warmup)


def steady_figures(steady: list[dict[str, Any]], measured: int) -> dict[str, Any]:
    """The per-batch figures: means over the last ``measured`` steady batches, and the median of
    the last quarter (the first runs' figure, kept for comparison)."""
    return {
        "per_batch_ms": tail_mean(steady, "ms_triggerExecution", measured),
        "measured_batches": measured,
        "median_last_quarter_ms": last_quarter_median(steady, "ms_triggerExecution"),
        **{f"{k}_ms": tail_mean(steady, f"ms_{k}", measured) for k in DURATION_PARTS[1:]},
        **{
            k: tail_mean(steady, f"state_{k}", measured)
            for k in (
                "allUpdatesTimeMs",
                "allRemovalsTimeMs",
                "commitTimeMs",
                "numRowsTotal",
                "numRowsRemoved",
            )
        },
        "expired_timers": tail_mean(
            [{"t": b["custom"].get("numExpiredTimers", 0)} for b in steady], "t", measured
        ),
    }


def flink_engine(
    engine: str, traffic: SteadyTraffic, path: Path, args: argparse.Namespace
) -> dict[str, Any] | None:
    """One Flink engine's figures on the files of ``path``: two whole jobs, or one sampled job
    with ``--flink-sample-steady-events``."""
    if not FLINK_PYTHON.exists():
        print(f"{engine} skipped: run bench/setup_flink.sh first", file=sys.stderr)
        return None
    checkpoints = BENCH / "out" / "scale" / f"{path.name}-{engine}-checkpoints"
    log = checkpoints.parent / f"{path.name}-{engine}"
    settings = {
        "incremental_checkpoints": incremental_checkpoints(engine, args),
        "managed_memory": args.flink_managed_memory or "512m",
        # the JVM's maximum heap (Flink's heap state lives in it); None: the JVM's default, a
        # quarter of the machine's memory
        "jvm_heap": args.flink_heap,
        "conf": flink_conf(engine, args),
    }

    def job(folder: Path, label: str) -> tuple[list[str], Path, dict[str, str], Path]:
        """A job's command, stderr log, environment and GC log, from fresh checkpoints."""
        shutil.rmtree(checkpoints, ignore_errors=True)
        gc_log = Path(f"{log}-{label}.gc.log")
        command = flink_command(engine, folder, checkpoints, args)
        return command, Path(f"{log}-{label}.log"), flink_jvm_env(args.flink_heap, gc_log), gc_log

    if args.flink_warmup_on_heap and flink_state(engine) == "rocksdb":
        query = "patterns" if engine.startswith("flink-match") else "sessions"
        managed = f"taskmanager.memory.managed.size={settings['managed_memory']}"
        conf = [*flink_conf(engine, args), managed]
        run = transferred(query, conf, traffic, path, Path(f"{log}-transfer"), args)
        return {**run, "summary": {**run["summary"], "managed_memory": settings["managed_memory"]}}
    try:
        if args.flink_sample_steady_events:
            command, stderr, env, gc_log = job(path, "sampled")
            samples = sample_job(
                command, stderr, env, traffic.warmup_events, args.flink_sample_steady_events
            )
            steady = rate(samples, traffic.warmup_events, traffic.batch_events)
            summary = {
                "method": "sampled",
                "per_batch_ms": steady["per_batch_ms"],
                "steady_events_per_s": steady["events_per_s"],
                "sampled_steady_events": steady["to_events"] - steady["from_events"],
                "warmup_seconds": steady["warmup_seconds"],
                **settings,
                "gc": {"sampled": gc_summary(gc_log)},
            }
            return {"summary": summary, "steady": steady, "samples": samples}
        runs, gc = {}, {}
        for label, folder in (("warmup", warmup_only(path)), ("full", path)):
            command, stderr, env, gc_log = job(folder, label)
            runs[label] = run_json(command, stderr, env=env)
            gc[label] = gc_summary(gc_log)
    finally:
        shutil.rmtree(checkpoints, ignore_errors=True)
    return {"summary": {**two_job_figures(runs, traffic), **settings, "gc": gc}, "runs": runs}


def two_job_figures(runs: dict[str, dict[str, Any]], traffic: SteadyTraffic) -> dict[str, Any]:
    """Flink's steady per-batch figure from a warm-up job and a warm-up + steady job: the
    difference of their net runtimes over the steady batches."""
    steady_s = float(runs["full"]["seconds"]) - float(runs["warmup"]["seconds"])
    return {
        "method": "two jobs",
        "steady_batches": traffic.steady_batches,
        "per_batch_ms": 1000 * steady_s / traffic.steady_batches,
        "steady_events_per_s": traffic.steady_batches * traffic.batch_events / steady_s
        if steady_s > 0
        else None,
        "warmup_seconds": runs["warmup"]["seconds"],
        "seconds": runs["full"]["seconds"],
        "outputs": runs["full"].get("sessions", runs["full"].get("matches")),
        # events Flink dropped as late (behind its watermark); 0 on this in-order traffic
        "dropped_late": (
            int(runs["full"]["input_events"]) - int(runs["full"]["events"])
            if "events" in runs["full"]
            else None
        ),
    }


def warmup_only(path: Path) -> Path:
    """A folder beside the files of ``path`` with links to its warm-up files alone."""
    warm = path / "warmup-only"
    if not warm.exists():
        warm.mkdir()
        for f in sorted(path.glob("*-warmup.jsonl")):
            os.symlink(f, warm / f.name)
    return warm


def flink_state(engine: str) -> str:
    """The state backend of a Flink engine (``flink_sessions.py``'s ``--state``)."""
    return "rocksdb" if engine.endswith("rocksdb") else "heap"


def incremental_checkpoints(engine: str, args: argparse.Namespace) -> bool:
    """RocksDB's checkpoints copy only new SST files (unless ``--flink-full-checkpoints``);
    Flink's heap state has no incremental checkpoints."""
    return flink_state(engine) == "rocksdb" and not args.flink_full_checkpoints


def flink_conf(engine: str, args: argparse.Namespace) -> list[str]:
    """Flink options beyond the checkpoints': the CEP operator's on RocksDB, then
    ``--flink-conf``'s."""
    return [*(CEP_ROCKSDB_CONF if engine == "flink-match-rocksdb" else ()), *args.flink_conf]


def flink_command(
    engine: str, folder: Path, checkpoints: Path, args: argparse.Namespace
) -> list[str]:
    """The Flink script run for ``engine`` over the files of ``folder``, with the window and
    out-of-orderness ``detect``'s and ``sessionize``'s runs use, checkpoints every
    ``CHECKPOINT_EVERY`` into ``checkpoints``."""
    from patterns_bench import WITHIN
    from sessions_bench import DELAY, GAP

    if engine.startswith("flink-match"):
        script = BENCH / "flink_patterns.py"
        window = ["--pattern", "p1_then_p2", "--within-minutes", minutes(WITHIN)]
    else:
        script = BENCH / "flink_sessions.py"
        window = ["--gap-minutes", minutes(GAP)]
    incremental = str(incremental_checkpoints(engine, args)).lower()
    return [
        str(FLINK_PYTHON),
        str(script),
        "--input",
        str(folder),
        "--state",
        flink_state(engine),
        "--parallelism",
        "2",
        "--out-of-orderness-seconds",
        str(int(DELAY.total_seconds())),
        *window,
        "--conf",
        f"execution.checkpointing.interval={CHECKPOINT_EVERY}",
        "--conf",
        "execution.checkpointing.storage=filesystem",
        "--conf",
        f"execution.checkpointing.dir={checkpoints.resolve().as_uri()}",
        "--conf",
        f"execution.checkpointing.incremental={incremental}",
        *(f"--conf={c}" for c in flink_conf(engine, args)),
        *(["--managed-memory", args.flink_managed_memory] if args.flink_managed_memory else []),
    ]


def minutes(span: timedelta) -> str:
    """``span`` as the whole minutes the Flink scripts take."""
    return str(int(span.total_seconds() // 60))


def chosen_engines(args: argparse.Namespace) -> list[str]:
    """The engines of ``--engines``; without it, the workload's engines but ``NOT_BY_DEFAULT``."""
    if args.engines:
        return [e.strip() for e in args.engines.split(",")]
    every = (*SPARK_ENGINES[args.workload], *FLINK_ENGINES[args.workload])
    return [e for e in every if e not in NOT_BY_DEFAULT]


def measure(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Runs every (N, B, engine) point, saving the results file after each one, so a run that is
    stopped keeps what it measured; with ``--resume`` the points already in the file are kept
    and not run again."""
    results: list[dict[str, Any]] = (
        load(name)["results"] if args.resume and results_file(name) is not None else []
    )
    done = {(r["keys"], r["batch_events"], r["engine"]) for r in results}
    document: dict[str, Any] = {
        "args": {k: v for k, v in vars(args).items() if k != "func"},
        "results": results,
    }
    engines = chosen_engines(args)
    for n in args.keys:
        for b in args.batch_events:
            traffic = point_traffic(n, b, args)
            steady, warmup = traffic.steady_batches, traffic.warmup_revisits
            path = dataset(traffic)
            for engine in engines:
                if (n, b, engine) in done:
                    continue
                t0 = time.perf_counter()
                if engine in SPARK_ENGINES[args.workload]:
                    run = spark_engine(engine, traffic, path, args)
                else:
                    # the same stream, prolonged: a steady phase long enough to stand out of
                    # the noise of a Flink job's start and end (see the module docstring)
                    longer = dataclasses.replace(
                        traffic,
                        steady_batches=max(steady, -(-args.flink_min_steady_events // b)),
                    )
                    run = flink_engine(engine, longer, dataset(longer), args)
                if run is None:
                    continue
                results.append(
                    {
                        "keys": n,
                        "batch_events": b,
                        "engine": engine,
                        "warmup_revisits": warmup,
                        **run,
                    }
                )
                save(name, document)
                s = run["summary"]
                print(
                    f"N={n:,} B={b:,} {engine}: {s['per_batch_ms']:.0f} ms per batch "
                    f"({time.perf_counter() - t0:.0f} s wall)",
                    file=sys.stderr,
                    flush=True,
                )
    return document


def report(document: dict[str, Any], name: str) -> str:
    """The Markdown tables (per-batch time, and fixed vs per-row cost) and the crossovers."""
    results = sorted(document["results"], key=lambda r: (r["keys"], r["batch_events"], r["engine"]))
    lines = [
        "| open keys N | events per batch B | engine | per batch ms | addBatch | planning "
        "| getBatch + latestOffset | walCommit + commitOffsets | state updates | state removals "
        "| state commit | state rows |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        s = r["summary"]

        def cell(*keys: str, s: dict[str, Any] = s) -> str:
            vals = [s.get(k) for k in keys]
            return "-" if any(v is None for v in vals) else f"{sum(vals):,.0f}"

        lines.append(
            f"| {r['keys']:,} | {r['batch_events']:,} | {r['engine']} | {s['per_batch_ms']:,.0f} "
            f"| {cell('addBatch_ms')} | {cell('queryPlanning_ms')} "
            f"| {cell('getBatch_ms', 'latestOffset_ms')} "
            f"| {cell('walCommit_ms', 'commitOffsets_ms')} "
            f"| {cell('allUpdatesTimeMs')} | {cell('allRemovalsTimeMs')} | {cell('commitTimeMs')} "
            f"| {cell('numRowsTotal')} |"
        )
    lines += [
        "",
        "Fixed cost per micro-batch and cost per input row (fit over the batch sizes):",
        "",
    ]
    lines += [
        "| engine | open keys N | fixed ms per batch (a) | µs per input row (b) |",
        "|---|---:|---:|---:|",
    ]
    engines = sorted({r["engine"] for r in results})
    keys = sorted({r["keys"] for r in results})
    for e in engines:
        for n in keys:
            pts = [
                (r["batch_events"], r["summary"]["per_batch_ms"])
                for r in results
                if r["engine"] == e and r["keys"] == n
            ]
            fit = fit_line(pts)
            if fit:
                lines.append(f"| {e} | {n:,} | {fit[0]:,.0f} | {fit[1] * 1000:,.1f} |")
    lines += ["", *crossovers(results)]
    text = "\n".join(lines) + "\n"
    (RESULTS / f"{name}.md").write_text(text)
    return text


def crossovers(results: list[dict[str, Any]]) -> list[str]:
    """Per batch size: for each other engine, the open-key counts at which ours is faster."""
    ours = next(
        (e for e in ("sessionize", "detect") if any(r["engine"] == e for r in results)), None
    )
    if ours is None:
        return []
    out = []
    for b in sorted({r["batch_events"] for r in results}):
        per = {
            (r["engine"], r["keys"]): r["summary"]["per_batch_ms"]
            for r in results
            if r["batch_events"] == b
        }
        for other in sorted({e for e, _ in per} - {ours, "read_validate"}):
            keys = sorted(n for e, n in per if e == other and (ours, n) in per)
            faster = [n for n in keys if per[(ours, n)] < per[(other, n)]]
            ratio = ", ".join(f"{n:,}: {per[(other, n)] / per[(ours, n)]:.2f}x" for n in keys)
            out.append(
                f"- B={b:,}, {ours} vs {other} (their time / ours; above 1: {ours} faster): "
                f"{ratio}; "
                f"{ours} faster at N in {[f'{n:,}' for n in faster] or 'none'}"
            )
    return out


def plot(document: dict[str, Any], name: str) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: plot skipped", file=sys.stderr)
        return None
    results = document["results"]
    sizes = sorted({r["batch_events"] for r in results})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, b in zip(axes[0], sizes, strict=True):
        for e in sorted({r["engine"] for r in results}):
            pts = sorted(
                (r["keys"], r["summary"]["per_batch_ms"])
                for r in results
                if r["engine"] == e and r["batch_events"] == b
            )
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=e)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="open keys",
            ylabel="ms per batch (Flink: equivalent)",
            title=f"{b:,} events per batch",
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path = RESULTS / f"{name}.png"
    fig.savefig(path, dpi=110)
    return path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="print the figures of one stopped Spark engine run (--keys N --batch-events B "
        "--engines ENGINE) from its per-batch log, measure nothing",
    )
    run = sub.add_parser("spark-run", help="internal: one Spark engine run")
    run.add_argument("--engine", required=True)
    run.add_argument("--input", required=True)
    run.add_argument("--work", required=True)
    for p in (parser, run):
        p.add_argument("--shuffle-partitions", type=int, default=4)
        p.add_argument("--driver-memory", default="6g")
        p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    ints = lambda text: [int(x) for x in text.split(",")]  # noqa: E731
    parser.add_argument("--keys", type=ints, default=[10_000, 100_000, 1_000_000, 5_000_000])
    parser.add_argument("--batch-events", type=ints, default=[5_000, 50_000])
    parser.add_argument("--steady-batches", type=int, default=40)
    parser.add_argument(
        "--flink-min-steady-events",
        type=int,
        default=2_000_000,
        help="Flink's steady phase holds at least this many events (more batches of B than the "
        "Spark engines get, of the same stream) so that it outweighs a job's start-up noise",
    )
    parser.add_argument(
        "--flink-full-checkpoints",
        action="store_true",
        help="Flink RocksDB with full checkpoints (Flink's default) instead of incremental ones",
    )
    parser.add_argument(
        "--flink-managed-memory",
        help="Flink's taskmanager.memory.managed.size, RocksDB's block cache and write buffers "
        "(default: flink_sessions.py's 512m)",
    )
    parser.add_argument(
        "--flink-heap",
        help="the Flink JVM's maximum heap (-Xmx; Flink's heap state lives in it), e.g. 16g "
        "(default: the JVM's own, a quarter of the machine's memory)",
    )
    parser.add_argument(
        "--flink-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Flink configuration option for the Flink jobs (repeatable)",
    )
    parser.add_argument(
        "--flink-sample-steady-events",
        type=int,
        help="measure Flink in one job, sampled every 10 s through its REST API and stopped once "
        "this many events have come in since the first sample past the warm-up "
        "(bench/scale/flink_rate.py), instead of two whole jobs: for jobs too long to run twice",
    )
    parser.add_argument(
        "--flink-warmup-on-heap",
        action="store_true",
        help="Flink on RocksDB: run the warm-up on the heap backend (--flink-heap) and carry its "
        "state to RocksDB in a savepoint, then sample the RocksDB job "
        "(bench/scale/flink_transfer.py): for states whose RocksDB warm-up takes hours",
    )
    parser.add_argument(
        "--warmup-revisits",
        type=int,
        default=0,
        help="warm-up length in touches of every key; default (0): the fewest that put the "
        "measured last quarter past every key's first deadline (scale/traffic.py's "
        "settling_warmup), so timers fire and sessions close at their steady rates",
    )
    parser.add_argument("--workload", choices=sorted(SPARK_ENGINES), default="sessions")
    parser.add_argument("--engines", help="comma-separated subset of the workload's engines")
    parser.add_argument("--name", help="results file name (default scale-state-growth[-patterns])")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write the tables and the plot from the results file, measure nothing",
    )
    parser.add_argument(
        "--merge",
        action="append",
        default=[],
        metavar="NAME",
        help="also put the points of the results file NAME in the tables and the plot, as "
        "engines of their own (repeatable; the results file itself is left as it is)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the points already in the results file and run only the missing ones",
    )
    return parser.parse_args(argv)


def merged(name: str) -> list[dict[str, Any]]:
    """The results of the results file ``name``, each engine named apart for the tables and the
    plot: ``ENGINE, heap warm-up`` for Flink RocksDB points measured on a state carried from a
    heap warm-up (``--flink-warmup-on-heap``), ``ENGINE (name)`` otherwise."""
    results = load(name)["results"]
    for r in results:
        heap = "heap warm-up" in r["summary"].get("method", "")
        r["engine"] = f"{r['engine']}, heap warm-up" if heap else f"{r['engine']} ({name})"
    return results


def main() -> None:
    args = parse_args()
    if args.mode == "spark-run":
        spark_run(args)
        return
    if args.partial:
        partial(args)
        return
    name = args.name or "scale-state-growth" + ("-patterns" if args.workload == "patterns" else "")
    if args.report_only:
        document = load(name)
    else:
        document = measure(args, name)
        save(name, document)
    for other in args.merge:
        document["results"] += merged(other)
    print(report(document, name))
    plot(document, name)


if __name__ == "__main__":
    main()
