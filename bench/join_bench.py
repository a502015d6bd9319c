"""Issue 41's benchmark, one script, the same files for every side: an interval join of two
streams.

Payments (``payment_id STRING, account STRING, at BIGINT`` epoch ms, ``amount DOUBLE``) and
refunds (``payment_id STRING, at BIGINT, amount DOUBLE``), JSON lines in two folders of the
same number of files, file N of each holding the same slice of event time (near time order:
each row up to ``--jitter-seconds`` behind its place). A refund follows ``--refund-share`` of the
payments, 0-1 h after its payment. ``--late-share`` of each side's rows are late: written into a
file whose watermark (the largest event time of both folders' earlier files, less the delay) is
0 to ``--late-minutes`` ahead of them, so some are within the lateness of 10 minutes and some
beyond; a late refund belongs to a payment of the hour before it. A last file of each folder
holds a sentinel row hours after the rest (its own id, matching nothing), so that Spark's
watermark passes every row of the data; sentinels are left out of every count of output rows.
Each pair of files is one micro-batch (``maxFilesPerTrigger`` 1 per source). The right row
matches when ``left.at <= right.at <= left.at + 1 h``, on equal ``payment_id``:

  (w)  streamwarden: ``Pipeline(parse_config(...), spark).run(once=True, drain=True)`` of an
       ``operator = "join"`` config, ``between = ["0s", "1h"]``, ``allowed_lateness = "10m"``,
       ``max_out_of_orderness`` = the delay, joined rows and dead letters to Parquet; inner
       (``w-inner``) and left outer (``w-outer``);
  (s)  Spark: two ``readStream.schema(...).json(dir)``, each ``withWatermark("ts", delay)``,
       joined on ``p.payment_id = r.payment_id AND r.ts >= p.ts AND r.ts <= p.ts + interval
       1 hour``, append mode to Parquet, ``trigger(availableNow=True)``; inner (``s-inner``)
       and left outer (``s-outer``);
  (f)  Flink SQL's interval join (``bench/flink_join.py`` in ``.venv-flink``, made by
       ``bench/setup_flink.sh``), each folder's files read one after the other by its own
       source, watermark ``rt - delay`` on each; inner (``f-inner``) and left outer
       (``f-outer``).

Every Spark side runs on the same session (RocksDB state store, ``local[2]``, the same shuffle
partitions) and is timed from the query's start to its end (the pipeline: its whole run, drain
included); events/s = input rows (both folders, sentinels too) / seconds. ``--rounds`` rounds,
the Spark sides interleaved in each round; round 1 warms the JVM up and is reported but left
out of the medians. Flink runs before the Spark rounds, in one process (one JVM) that runs its
two jobs interleaved ``--rounds`` times, the first of each a warm-up too; its time is from
submitting the SQL to the last result row.

Reported per run: output rows, joined pairs and unmatched payments (sentinels left out); the
pairs an exact join of every row would give (the generator's count) and those a side lost;
late rows: (w) ``too_late`` dead letters per source, read from its dead-letter Parquet; (s)
Spark's ``numRowsDroppedByWatermark`` summed over the batches (rows it dropped without a
trace); the state rows of every batch (``numRowsTotal`` of every state operator: max and at the
end). The generator also works out, by a simulation of the micro-batch watermark over the files,
which rows each side should find late. Results: bench/out/join41.json (every run) and a summary
in bench/results/join41.json.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from streamwarden.config import parse_config
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from streamwarden.spark.session import build_spark_session

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "join41"
OUT = HERE / "out"
RESULTS = HERE / "results"
WORK = Path("/dev/shm") / "join41-bench"
PAYMENTS = "payment_id STRING, account STRING, at BIGINT, amount DOUBLE"
REFUNDS = "payment_id STRING, at BIGINT, amount DOUBLE"
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
T0_S = 1_795_800_000  # the files' modification times: a second apart, in name order
MIN_MS = 60_000
HOUR_MS = 60 * MIN_MS
UPPER_MS = HOUR_MS  # between = [0, 1 h]
SENTINEL = "zz-end"
DATA_VERSION = 2
SIDES = ("w-inner", "s-inner", "w-outer", "s-outer")


# -- the data ------------------------------------------------------------------------------------
def dataset(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """Writes the two folders once (see the module docstring); returns the data folder and what
    the generator knows of it."""
    name = f"p{args.payments}-f{args.files}-h{args.hours}-l{args.late_share}-{args.late_minutes}m"
    folder = DATA / name
    meta_file = folder / "meta.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("version") == DATA_VERSION:
            return folder, meta
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(41)
    span = args.hours * HOUR_MS
    slice_ms = span / args.files
    end = T0_MS + span
    jitter = args.jitter_seconds * 1000
    delay = args.delay_seconds * 1000

    def slot(at: int) -> int:
        return min(args.files - 1, max(0, int((at - T0_MS) // slice_ms)))

    # On-time rows, by the file of their time; payments[i] = (id, at) for the late refunds.
    files: dict[str, list[list[dict]]] = {
        "payments": [[] for _ in range(args.files)],
        "refunds": [[] for _ in range(args.files)],
    }
    step = span / args.payments
    pay_at: list[int] = []
    pay_id: list[str] = []
    late_payments = set(rng.sample(range(args.payments), int(args.payments * args.late_share)))
    for i in range(args.payments):
        at = T0_MS + int(i * step) - rng.randrange(jitter + 1)
        pid = f"p{i:07d}"
        pay_at.append(at)
        pay_id.append(pid)
        if i in late_payments:
            continue  # placed below, once the watermarks are known
        row = {"payment_id": pid, "account": f"a{rng.randrange(100_000):06d}", "at": at}
        row["amount"] = rng.randrange(100, 50_000) / 100
        files["payments"][slot(at)].append(row)
        if rng.random() < args.refund_share:
            r_at = at + rng.randrange(UPPER_MS + 1)
            if r_at < end:
                refund = {"payment_id": pid, "at": r_at, "amount": -row["amount"]}
                files["refunds"][slot(r_at)].append(refund)
    # The watermark batch N runs under (both folders' file n is batch n): the largest time of
    # batches 0..N-1 less the delay.
    tops = [max(r["at"] for side in files.values() for r in side[n]) for n in range(args.files)]
    watermark = [None] + [max(tops[:n]) - delay for n in range(1, args.files)]
    late_refunds = int(sum(len(f) for f in files["refunds"]) * args.late_share)
    for i in sorted(late_payments):
        n = rng.randrange(1, args.files)
        at = watermark[n] - rng.randrange(args.late_minutes * MIN_MS)
        pay_at[i] = at
        row = {"payment_id": pay_id[i], "account": f"a{rng.randrange(100_000):06d}", "at": at}
        row["amount"] = rng.randrange(100, 50_000) / 100
        place = files["payments"][n]
        place.insert(rng.randrange(len(place) + 1), row)
        if rng.random() < args.refund_share:
            r_at = at + rng.randrange(UPPER_MS + 1)
            if r_at < end:
                refund = {"payment_id": pay_id[i], "at": r_at, "amount": -row["amount"]}
                files["refunds"][max(n, slot(r_at))].append(refund)
    order = sorted(range(args.payments), key=pay_at.__getitem__)
    times = [pay_at[i] for i in order]
    for _ in range(late_refunds):
        n = rng.randrange(1, args.files)
        r_at = watermark[n] - rng.randrange(args.late_minutes * MIN_MS)
        # A payment of the hour before the refund: the refund matches it if both are let in.
        lo = bisect.bisect_left(times, r_at - UPPER_MS)
        hi = bisect.bisect_right(times, r_at)
        if hi <= lo:
            continue
        i = order[rng.randrange(lo, hi)]
        refund = {"payment_id": pay_id[i], "at": r_at, "amount": -1.0}
        place = files["refunds"][n]
        place.insert(rng.randrange(len(place) + 1), refund)
    for side, batches in files.items():
        landing = folder / side
        landing.mkdir(parents=True)
        for n, rows in enumerate(batches):
            text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
            (landing / f"part-{n:04d}.jsonl").write_text(text)
        sentinel: dict[str, Any] = {"payment_id": f"{SENTINEL}-{side}", "at": end + 3 * HOUR_MS}
        if side == "payments":
            sentinel["account"] = "a-end"
        sentinel["amount"] = 0.0
        (landing / f"part-{args.files:04d}.jsonl").write_text(json.dumps(sentinel) + "\n")
        # Spark takes new files in the order of their modification time, in milliseconds, and
        # two files written within a millisecond come in either order: a second apart each.
        for n in range(args.files + 1):
            os.utime(landing / f"part-{n:04d}.jsonl", (T0_S + n, T0_S + n))
    meta = {
        "version": DATA_VERSION,
        **{k: getattr(args, k) for k in ("payments", "files", "hours", "refund_share")},
        **{k: getattr(args, k) for k in ("late_share", "late_minutes", "jitter_seconds")},
        "delay_seconds": args.delay_seconds,
        "rows": {side: sum(len(b) for b in batches) for side, batches in files.items()},
        "input_lines": sum(len(b) for bs in files.values() for b in bs) + 2,
        "bytes": sum(p.stat().st_size for p in folder.rglob("*.jsonl")),
        **exact_join(files),
        **simulate(files, delay, args.lateness_minutes * MIN_MS),
    }
    meta_file.write_text(json.dumps(meta, indent=2))
    return folder, meta


def exact_join(files: dict[str, list[list[dict]]]) -> dict[str, int]:
    """The pairs of a join of every row, lateness aside, and the payments left unmatched."""
    pays: dict[str, list[int]] = {}
    for rows in files["payments"]:
        for r in rows:
            pays.setdefault(r["payment_id"], []).append(r["at"])
    pairs, matched = 0, set()
    for rows in files["refunds"]:
        for r in rows:
            for at in pays.get(r["payment_id"], ()):
                if at <= r["at"] <= at + UPPER_MS:
                    pairs += 1
                    matched.add(r["payment_id"])
    return {"exact_pairs": pairs, "exact_unmatched_payments": len(pays) - len(matched)}


def simulate(files: dict[str, list[list[dict]]], delay: int, lateness: int) -> dict[str, Any]:
    """Rows behind the watermark, per source: streamwarden's ``too_late`` (batch N under the
    watermark of batches 0..N-1 of both sources together, less the delay; late if more than
    the lateness behind it) and Spark's drops (its late-row watermark is the one the batch
    before ran under, and with two inputs the smaller of each input's: each input's largest
    time of batches 0..N-2 less the delay; late if behind it)."""
    batches = len(files["payments"])
    top = {s: [max((r["at"] for r in b), default=0) for b in files[s]] for s in files}
    both = [max(top[s][n] for s in files) for n in range(batches)]
    out: dict[str, Any] = {"behind_watermark": {}, "expected_too_late_w": {}}
    out["expected_dropped_s"] = {}
    for side, rows_by_batch in files.items():
        behind = within = beyond = dropped = 0
        for n, rows in enumerate(rows_by_batch):
            if n == 0:
                continue
            wm = max(both[:n]) - delay
            spark_wm = min(max(top[s][: n - 1]) for s in files) - delay if n >= 2 else None
            for r in rows:
                if r["at"] < wm:
                    behind += 1
                    if r["at"] < wm - lateness:
                        beyond += 1
                    else:
                        within += 1
                if spark_wm is not None and r["at"] < spark_wm:
                    dropped += 1
        out["behind_watermark"][side] = {"within_lateness": within, "beyond": beyond}
        out["expected_too_late_w"][side] = beyond
        out["expected_dropped_s"][side] = dropped
    return out


# -- measuring -----------------------------------------------------------------------------------
def jvm_cpu_seconds(spark: SparkSession) -> float:
    """CPU seconds (user + system) the Spark JVM has used so far, from /proc."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def state_rows(progress: list[dict[str, Any]]) -> list[int]:
    """The state rows (``numRowsTotal`` of every stateful operator) at the end of each batch."""
    return [
        sum(int(op.get("numRowsTotal", 0)) for op in p.get("stateOperators", [])) for p in progress
    ]


def dropped_by_watermark(progress: list[dict[str, Any]]) -> int:
    return sum(
        int(op.get("numRowsDroppedByWatermark", 0))
        for p in progress
        for op in p.get("stateOperators", [])
    )


def output_counts(frame: Any, left_id: str, right_id: str) -> dict[str, int]:
    """Rows out, pairs and unmatched payments, the sentinels left out."""
    frame = frame.where(~F.col(left_id).startswith(SENTINEL))
    row = frame.agg(
        F.count("*").alias("rows"),
        F.count(right_id).alias("pairs"),
        F.count_distinct(left_id).alias("payments"),
    ).collect()[0]
    return {
        "rows": int(row["rows"]),
        "pairs": int(row["pairs"]),
        "unmatched_payments": int(row["rows"]) - int(row["pairs"]),
        "distinct_payments": int(row["payments"]),
    }


def run_streamwarden(
    spark: SparkSession, data: Path, work: Path, args: argparse.Namespace, how: str
) -> dict[str, Any]:
    """(w): the pipeline of an ``operator = "join"`` config."""
    schemas = {
        "payments": {"key": "payment_id", "time": "at", "fields": PAYMENTS},
        "refunds": {"key": "payment_id", "time": "at", "fields": REFUNDS},
    }
    config = parse_config(
        {
            "name": "join-bench",
            "operator": "join",
            "sources": {
                name: {"path": str(data / name), "max_files_per_trigger": 1} for name in schemas
            },
            "schemas": schemas,
            "join": {
                "left": "payments",
                "right": "refunds",
                "on": [["payment_id", "payment_id"]],
                "between": ["0s", "1h"],
                "type": how,
                "allowed_lateness": f"{args.lateness_minutes}m",
                "max_out_of_orderness": f"{args.delay_seconds}s",
            },
            "sinks": {
                "joined": {"path": str(work / "joined")},
                "dead_letters": {"path": str(work / "dead_letters")},
            },
            "checkpoint": {"path": str(work / "checkpoint")},
            "spark": {"shuffle_partitions": args.shuffle_partitions},
            "monitoring": {"prometheus_port": "off"},
        },
        origin="bench",
    )
    cpu = jvm_cpu_seconds(spark)
    start = time.perf_counter()
    result = Pipeline(config, spark).run(once=True, drain=True)
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(spark) - cpu
    joined = read_output(spark, work / "joined")
    counts = output_counts(joined, "payments_payment_id", "refunds_payment_id")
    dead = read_output(spark, work / "dead_letters")
    late: dict[str, dict[str, int]] = {}
    if dead is not None:
        for r in dead.groupBy("source", "reason").count().collect():
            late.setdefault(r["source"], {})[r["reason"]] = int(r["count"])
    series = state_rows(result.progress)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "batches": result.batch_count,
        **counts,
        "dead_letters": late,
        "too_late": {s: late.get(s, {}).get("too_late", 0) for s in ("payments", "refunds")},
        "max_state_rows": max(series, default=0),
        "end_state_rows": series[-1] if series else None,
        "state_rows": series,
    }


def run_spark(
    spark: SparkSession, data: Path, work: Path, args: argparse.Namespace, how: str
) -> dict[str, Any]:
    """(s): Spark's stream-stream join with the time-range condition and both watermarks."""
    delay = f"{args.delay_seconds} seconds"

    def side(name: str, fields: str, alias: str) -> Any:
        rows = (
            spark.readStream.schema(fields).option("maxFilesPerTrigger", 1).json(str(data / name))
        )
        return (
            rows.withColumn("ts", F.timestamp_millis("at")).withWatermark("ts", delay).alias(alias)
        )

    p, r = side("payments", PAYMENTS, "p"), side("refunds", REFUNDS, "r")
    condition = F.expr(
        "p.payment_id = r.payment_id AND r.ts >= p.ts AND r.ts <= p.ts + interval 1 hour"
    )
    joined = p.join(r, condition, "inner" if how == "inner" else "leftOuter").select(
        *(
            F.col(f"p.{c}").alias(f"payments_{c}")
            for c in ("payment_id", "account", "at", "amount")
        ),
        *(F.col(f"r.{c}").alias(f"refunds_{c}") for c in ("payment_id", "at", "amount")),
    )
    writer = (
        joined.writeStream.format("parquet")
        .option("path", str(work / "joined"))
        .option("checkpointLocation", str(work / "checkpoint"))
        .outputMode("append")
        .trigger(availableNow=True)
    )
    cpu = jvm_cpu_seconds(spark)
    start = time.perf_counter()
    query = writer.start()
    query.awaitTermination()
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(spark) - cpu
    if query.exception():
        raise RuntimeError(str(query.exception()))
    progress = list(query.recentProgress)
    counts = output_counts(
        spark.read.parquet(str(work / "joined")), "payments_payment_id", "refunds_payment_id"
    )
    series = state_rows(progress)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "batches": len(progress),
        **counts,
        "num_rows_dropped_by_watermark": dropped_by_watermark(progress),
        "max_state_rows": max(series, default=0),
        "end_state_rows": series[-1] if series else None,
        "state_rows": series,
    }


def run_flink(data: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """(f): ``bench/flink_join.py`` in the PyFlink venv, both jobs ``args.rounds`` times."""
    python = HERE.parent / ".venv-flink" / "bin" / "python"
    command = [
        str(python),
        str(HERE / "flink_join.py"),
        "--payments",
        str(data / "payments"),
        "--refunds",
        str(data / "refunds"),
        "--state",
        "rocksdb",
        "--parallelism",
        "2",
        "--out-of-orderness-seconds",
        str(args.delay_seconds),
        "--types",
        "inner,left_outer",
        "--repeat",
        str(args.rounds),
        "--managed-memory",
        args.flink_managed_memory,
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.flink_timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [{"side": "f", "round": 1, "error": str(e)}]
    if done.returncode != 0:
        return [{"side": "f", "round": 1, "error": done.stderr[-3000:]}]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    runs = []
    for r in report["runs"]:
        runs.append(
            {
                "side": "f-inner" if r["type"] == "inner" else "f-outer",
                "round": r["round"],
                "seconds": r["seconds_job_wall"],
                "seconds_net": r["seconds_net"],
                "cpu_seconds": r["cpu_seconds"],
                "rows": r["rows"],
                "pairs": r["pairs"],
                "unmatched_payments": r["rows"] - r["pairs"],
                "distinct_payments": r.get("distinct_payments"),
                "max_state_rows": None,
            }
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=500_000)
    parser.add_argument("--refund-share", type=float, default=0.3)
    parser.add_argument("--hours", type=int, default=12, help="event time the payments span")
    parser.add_argument("--files", type=int, default=24, help="files per folder (batches)")
    parser.add_argument("--jitter-seconds", type=int, default=60)
    parser.add_argument("--late-share", type=float, default=0.01)
    parser.add_argument("--late-minutes", type=int, default=60, help="late rows: 0-N min behind")
    parser.add_argument("--delay-seconds", type=int, default=120, help="watermark delay")
    parser.add_argument("--lateness-minutes", type=int, default=10, help="(w)'s lateness")
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sides", default=",".join((*SIDES, "f")), help="of " + ",".join(SIDES))
    parser.add_argument("--flink-managed-memory", default="1g")
    parser.add_argument("--flink-timeout", type=int, default=1800)
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()
    sides = [s.strip() for s in args.sides.split(",")]
    data, meta = dataset(args)
    print(f"{data} {json.dumps(meta)}", flush=True)
    if args.generate_only:
        return
    runs: list[dict[str, Any]] = []

    def record(run: dict[str, Any]) -> None:
        if "seconds" in run:
            run["events_per_s"] = meta["input_lines"] / run["seconds"]
            run["pairs_lost"] = meta["exact_pairs"] - run["pairs"]
        runs.append(run)
        print(json.dumps({k: v for k, v in run.items() if k != "state_rows"}), flush=True)
        save(args, meta, runs, table=False)  # so far, in case the campaign is cut short

    if "f" in sides:  # first: a cut-short campaign still has every side
        for run in run_flink(data, args):
            record(run)
    spark_sides = [s for s in SIDES if s in sides]
    if spark_sides:
        spark = build_spark_session(
            app_name="join-bench",
            shuffle_partitions=args.shuffle_partitions,
            extra_conf={"spark.driver.memory": "4g"},
        )
        spark.sparkContext.setLogLevel("ERROR")
        for round_ in range(1, args.rounds + 1):
            for side in spark_sides:
                work = WORK / side
                shutil.rmtree(work, ignore_errors=True)
                how = "inner" if side.endswith("inner") else "left_outer"
                run_side = run_streamwarden if side.startswith("w") else run_spark
                run = run_side(spark, data, work, args, how)
                shutil.rmtree(work, ignore_errors=True)
                record({"side": side, "round": round_, **run})
        spark.stop()
    save(args, meta, runs)


def save(
    args: argparse.Namespace, meta: dict[str, Any], runs: list[dict[str, Any]], table: bool = True
) -> None:
    """bench/out/join41.json (every run) and bench/results/join41.json (the summary)."""
    summary = []
    for side in (*SIDES, "f-inner", "f-outer"):
        mine = [r for r in runs if r.get("side") == side]
        warm = [r for r in mine if r["round"] > 1 and "seconds" in r]
        if not warm:
            continue
        rates = [r["events_per_s"] for r in warm]
        last = warm[-1]
        summary.append(
            {
                "side": side,
                "seconds_all_rounds": [round(r.get("seconds", 0), 1) for r in mine],
                "events_per_s_median_warm": round(statistics.median(rates)),
                "events_per_s_warm_range": [round(min(rates)), round(max(rates))],
                "cpu_seconds_warm": [round(r["cpu_seconds"], 1) for r in warm],
                **{k: last.get(k) for k in ("rows", "pairs", "pairs_lost", "unmatched_payments")},
                "too_late": last.get("too_late"),
                "num_rows_dropped_by_watermark": last.get("num_rows_dropped_by_watermark"),
                "max_state_rows": last.get("max_state_rows"),
                "end_state_rows": last.get("end_state_rows"),
                "state_rows_per_batch": last.get("state_rows"),
            }
        )
    errors = [r for r in runs if "error" in r]
    document = {"args": vars(args), "data": meta, "summary": summary, "errors": errors}
    OUT.mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    (OUT / "join41.json").write_text(json.dumps({**document, "runs": runs}, indent=2))
    (RESULTS / "join41.json").write_text(json.dumps(document, indent=1))
    if not table:
        return
    print(
        "\n| side | events/s median (warm range) | rows out | pairs (lost) | unmatched |"
        " too_late (w) | Spark dropped | max / end state rows |"
    )
    for s in summary:
        lo, hi = s["events_per_s_warm_range"]
        print(
            f"| {s['side']} | {s['events_per_s_median_warm']:,} ({lo:,}-{hi:,}) | {s['rows']:,}"
            f" | {s['pairs']:,} ({s['pairs_lost']}) | {s['unmatched_payments']:,}"
            f" | {s['too_late']} | {s['num_rows_dropped_by_watermark']}"
            f" | {s['max_state_rows']} / {s['end_state_rows']} |"
        )


if __name__ == "__main__":
    sys.exit(main())
