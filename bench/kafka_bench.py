"""Kafka in and out (issue 17): the sessions pipeline from a Kafka topic to Kafka topics, against
the same records from landing files to Parquet, and the end-to-end latency through Kafka.

Run with ``make bench-kafka`` (or ``.venv/bin/python bench/kafka_bench.py``). It starts a real
local broker (KRaft, 127.0.0.1, :class:`~streamwarden.local.broker.LocalBroker`), then:

Throughput, the data set of ``sessions_bench.py`` (generated once, cached under bench/data),
produced once to a topic of 4 partitions; each run is ``Pipeline(config).run(once=True,
drain=True)`` in a process and JVM of its own, same shuffle partitions, same batch size:

  (b) files -> Parquet sinks: the baseline
  (a) Kafka topic -> Kafka topics (sessions + dead letters, the transactional sink)
  (c) Kafka topic -> Parquet sinks: (c) - (b) is the Kafka source's cost, (a) - (c) the sink's

Wall time is the run's (both queries: the data and the drain), from after the SparkSession has
started. Every run is reconciled with ``account_run`` (records in = events in final sessions +
dead letters), read back from its sinks; the time each sink's ``write_batch`` took is summed.

Latency: a continuous pipeline (trigger 1 s, gap 5 s) reads a topic while this process produces
at a steady rate, each record's event time its produce time; a ``read_committed`` consumer
thread stamps each output record's arrival. Per dead letter (malformed records, mixed in):
arrival - produce time, the pipeline's own latency. Per session (first revision): arrival -
produce time of its last event, which includes the gap and the watermark delay; minus the gap
it is the processing latency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any

import sessions_bench as bench

from streamwarden.local.broker import LocalBroker
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.local.producer import produce_lines

HERE = bench.HERE
OUT = HERE / "out" / "kafka"
RUN_NAMES = {
    "b": "(b) files -> Parquet",
    "a": "(a) Kafka -> Kafka (transactional sink)",
    "c": "(c) Kafka -> Parquet",
}


# ---------------------------------------------------------------- child: one pipeline run


def child(spec_path: Path) -> None:
    """Runs one pipeline as ``spec_path`` says and prints one JSON line of what it measured."""
    spec = json.loads(spec_path.read_text())
    from streamwarden.config import parse_config
    from streamwarden.operators.base import account_run
    from streamwarden.pipeline import Pipeline

    config = parse_config(spec["config"], origin="bench")
    sink_seconds = _time_sinks()
    pipeline = Pipeline(config)
    spark = pipeline.spark  # started before the clock
    python_cpu_start = time.process_time()
    if spec["mode"] == "latency":
        _run_until_interrupted(pipeline, spec)
        records = json.loads(Path(spec["count_file"]).read_text())["records"]
        start, batches = time.perf_counter(), []
    else:
        records = spec["records"]
        cpu_start = bench.jvm_cpu_seconds(spark)
        start = time.perf_counter()
        result = pipeline.run(once=True, drain=True)
        batches = result.progress
    seconds = time.perf_counter() - start
    report: dict[str, Any] = {"seconds": seconds, "records": records}
    # the driver's Python: a Kafka sink's rows pass through it (the JVM's CPU leaves it out)
    report["python_cpu_seconds"] = time.process_time() - python_cpu_start
    if spec["mode"] != "latency":
        report["cpu_seconds"] = bench.jvm_cpu_seconds(spark) - cpu_start
        report["batches"] = len(batches)
        report["add_batch_s"] = sum(p["durationMs"].get("addBatch", 0) for p in batches) / 1000
        report["trigger_s"] = (
            sum(p["durationMs"].get("triggerExecution", 0) for p in batches) / 1000
        )
    report["sink_seconds"] = dict(sink_seconds)
    accounting = account_run(spark, config, records)
    report.update(
        balanced=accounting.balanced,
        accounting=accounting.describe(),
        sessions=accounting.sessions,
        events_in_sessions=accounting.events_in_sessions,
        dead_letters=sum(accounting.dead_letters.values()),
    )
    print("RESULT " + json.dumps(report), flush=True)


def _time_sinks() -> dict[str, float]:
    """Sums the wall time of each sink's ``write_batch`` (the first sink of a batch also runs
    the persisted stateful step, which the later ones reuse)."""
    from streamwarden.sinks.kafka import KafkaBatchSink
    from streamwarden.sinks.parquet import ParquetBatchSink

    totals: dict[str, float] = {}
    for cls in (KafkaBatchSink, ParquetBatchSink):
        original = cls.write_batch

        def timed(self: Any, rows: Any, batch_id: int, _original: Any = original) -> bool:
            start = time.perf_counter()
            try:
                return bool(_original(self, rows, batch_id))
            finally:
                key = f"{type(self).__name__}:{self.name}"
                totals[key] = totals.get(key, 0.0) + time.perf_counter() - start

        cls.write_batch = timed  # type: ignore[method-assign]
    return totals


def _run_until_interrupted(pipeline: Any, spec: dict[str, Any]) -> None:
    """Runs continuously; says it has started through the ready file; SIGINT (from the parent)
    stops it between two polls."""
    ready = Path(spec["ready_file"])
    try:
        pipeline.run(once=False, on_start=lambda _monitor: ready.write_text("started"))
    except KeyboardInterrupt:
        return


# ---------------------------------------------------------------- parent: configs and runs


def pipeline_config(
    work: Path,
    source: dict[str, Any],
    sinks: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    **sections: Any,
) -> dict[str, Any]:
    """A sessions pipeline as the sessions benchmark's (c+) runs it, with ``source``/``sinks``."""
    data: dict[str, Any] = {
        "name": "kafka-bench",
        "schema": PAGEVIEW_SCHEMA,
        "source": source,
        "sessions": {
            "max_out_of_orderness": "1m",
            "idle_timeout": None,
            "aggregates": PAGEVIEW_AGGREGATES,
        },
        "sinks": sinks,
        "checkpoint": {"path": str(work / "checkpoint")},
        "spark": {
            "shuffle_partitions": args.shuffle_partitions,
            "conf": {"spark.driver.memory": "6g"},
        },
        "monitoring": {"prometheus_port": "off"},
    }
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value}
    return data


def parquet_sinks(work: Path) -> dict[str, dict[str, Any]]:
    return {
        "sessions": {"path": str(work / "sessions")},
        "dead_letters": {"path": str(work / "dead_letters")},
    }


def kafka_sinks(broker: LocalBroker, prefix: str) -> dict[str, dict[str, Any]]:
    sinks = {}
    for name in ("sessions", "dead_letters"):
        topic = f"{prefix}-{name.replace('_', '-')}"
        broker.create_topic(topic, partitions=4)
        sinks[name] = {"kind": "kafka", "topic": topic}
    return sinks


def run_child(spec: dict[str, Any], work: Path) -> dict[str, Any]:
    """Runs one pipeline in a Python process (and Spark JVM) of its own; returns its report."""
    work.mkdir(parents=True, exist_ok=True)
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(spec))
    log = work / "child.log"
    with log.open("w") as out:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(spec_path)],
            stdout=subprocess.PIPE, stderr=out, text=True, timeout=1800, check=False,
        )  # fmt: skip
    return _child_report(done.stdout, done.returncode, log)


def _child_report(stdout: str, code: int, log: Path) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    if code != 0 or not lines:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"bench run failed (code {code}); {log} ends:\n{tail}")
    report: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return report


def landing_lines(path: Path) -> Iterator[str]:
    for file in sorted(path.glob("events-*.jsonl")):
        with file.open(encoding="utf-8") as f:
            for line in f:
                yield line.rstrip("\n")


def throughput(args: argparse.Namespace, broker: LocalBroker) -> dict[str, Any]:
    path = bench.dataset(args.events, args.users, args.files)
    records = sum(1 for _ in landing_lines(path))
    broker.create_topic("pageviews", partitions=4)
    client = {"bootstrap.servers": broker.bootstrap_servers}
    start = time.perf_counter()
    # record i to partition i mod 4, as a keyed producer spreads users: every partition holds
    # a quarter of each stretch of event time (unkeyed, librdkafka's sticky partitioner puts
    # whole runs of records in one partition, and the partitions drift apart in event time)
    produced = sum(
        produce_lines(client, "pageviews", islice(landing_lines(path), p, None, 4), partition=p)
        for p in range(4)
    )
    produce_s = time.perf_counter() - start
    assert produced == records, (produced, records)
    print(f"produced {produced:,} records to 'pageviews' (4 partitions) in {produce_s:.1f} s")
    per_batch = args.events // args.files * args.files_per_trigger
    files_source = {"path": str(path), "max_files_per_trigger": args.files_per_trigger}
    kafka_source = {"kind": "kafka", "topics": ["pageviews"], "max_offsets_per_trigger": per_batch}
    kafka = {"bootstrap_servers": broker.bootstrap_servers}
    runs: dict[str, dict[str, Any]] = {}
    for rnd in range(1, args.rounds + 1):
        for name in args.runs.split(","):
            work = OUT / f"round-{rnd}" / name
            if name == "b":
                config = pipeline_config(work, files_source, parquet_sinks(work), args)
            elif name == "a":
                sinks = kafka_sinks(broker, f"r{rnd}-a")
                config = pipeline_config(work, kafka_source, sinks, args, kafka=kafka)
            else:
                config = pipeline_config(work, kafka_source, parquet_sinks(work), args, kafka=kafka)
            spec = {"mode": "throughput", "config": config, "records": records}
            report = run_child(spec, work)
            key = name if args.rounds == 1 else f"{name} [round {rnd}]"
            runs[key] = report
            print(f"{RUN_NAMES[name]} [round {rnd}]: {json.dumps(report)}", flush=True)
    return {"records": records, "produce_seconds": produce_s, "runs": runs}


# ---------------------------------------------------------------- latency


MALFORMED = re.compile(r"bench-malformed seq=(\d+) produced_ms=(\d+)")


def paced_lines(args: argparse.Namespace, sent: dict[str, int]) -> Iterator[str]:
    """``rate`` records a second for ``seconds``, each stamped with the wall clock as it is
    handed to the producer. Users come in generations of ``users`` (one record each every
    ``users / rate`` s) that send ``pages`` records and then fall silent, so every session has
    ``pages`` events and closes one gap later. Every ``malformed_every``-th record is broken
    JSON carrying its produce time (a dead letter in the batch that reads it)."""
    total = int(args.rate * (args.warmup + args.seconds))
    start = time.monotonic()
    sent["measured_from_ms"] = int(time.time() * 1000 + args.warmup * 1000)
    for i in range(total):
        wait = start + i / args.rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        now_ms = int(time.time() * 1000)
        if args.malformed_every and i % args.malformed_every == args.malformed_every - 1:
            sent["malformed"] += 1
            yield f"{{bench-malformed seq={i} produced_ms={now_ms}"
            continue
        generation, slot = divmod(sent["valid"], args.users * args.pages)
        user = f"g{generation}-u{slot % args.users}"
        sent["valid"] += 1
        page = slot // args.users + 1
        yield json.dumps({"user_id": user, "ts": now_ms, "page_number": page, "url": f"/p/{page}"})


class Arrivals(threading.Thread):
    """A ``read_committed`` consumer of the output topics that stamps each record's arrival."""

    def __init__(self, broker: LocalBroker, topics: list[str]) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "bench-latency-reader",
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 20,
            }
        )
        self.consumer.subscribe(topics)
        self.records: list[tuple[float, str, dict[str, Any]]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                msg = self.consumer.poll(0.1)
                if msg is None or msg.error():
                    continue
                arrived_ms = time.time() * 1000
                self.records.append((arrived_ms, msg.topic(), json.loads(msg.value())))
        finally:
            self.consumer.close()


def latency(args: argparse.Namespace, broker: LocalBroker) -> dict[str, Any]:
    work = OUT / "latency"
    topics = {"in": "live-pageviews", "sessions": "live-sessions", "dead": "live-dead-letters"}
    for topic in topics.values():
        broker.create_topic(topic, partitions=4)
    sinks = {
        "sessions": {"kind": "kafka", "topic": topics["sessions"]},
        "dead_letters": {"kind": "kafka", "topic": topics["dead"]},
    }
    source = {"kind": "kafka", "topics": [topics["in"]]}
    config = pipeline_config(
        work, source, sinks, args,
        kafka={"bootstrap_servers": broker.bootstrap_servers},
        sessions={
            "gap": args.gap, "allowed_lateness": "1s", "max_out_of_orderness": args.delay,
            "idle_timeout": "3s",
        },
    )  # fmt: skip
    config["spark"]["trigger_interval"] = "1s"
    ready, count_file = work / "ready", work / "count.json"
    spec = {
        "mode": "latency", "config": config,
        "ready_file": str(ready), "count_file": str(count_file),
    }  # fmt: skip
    work.mkdir(parents=True, exist_ok=True)
    (work / "spec.json").write_text(json.dumps(spec))
    log = (work / "child.log").open("w")
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", str(work / "spec.json")],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip
    try:
        return _measure_latency(args, broker, topics, process, ready, count_file, work)
    finally:
        if process.poll() is None:
            process.kill()
        log.close()


def _measure_latency(
    args: argparse.Namespace, broker: LocalBroker, topics: dict[str, str],
    process: subprocess.Popen[str], ready: Path, count_file: Path, work: Path,
) -> dict[str, Any]:  # fmt: skip
    deadline = time.monotonic() + 180
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the latency pipeline did not start; see {work / 'child.log'}")
        time.sleep(0.2)
    arrivals = Arrivals(broker, [topics["sessions"], topics["dead"]])
    arrivals.start()
    time.sleep(3)  # the consumer's assignment; the query warms up on the first records
    sent = {"valid": 0, "malformed": 0, "measured_from_ms": 0}
    client = {"bootstrap.servers": broker.bootstrap_servers}
    start = time.monotonic()
    produced = produce_lines(client, topics["in"], paced_lines(args, sent))
    produce_s = time.monotonic() - start
    print(f"produced {produced:,} records in {produce_s:.1f} s ({produced / produce_s:,.0f}/s)")
    generations, rest = divmod(sent["valid"], args.users * args.pages)
    expected_sessions = generations * args.users + min(rest, args.users)
    wait_until = time.monotonic() + 90
    while time.monotonic() < wait_until:
        dead = sum(1 for _, t, _ in arrivals.records if t == topics["dead"])
        ids = {r["session_id"] for _, t, r in arrivals.records if t == topics["sessions"]}
        if dead >= sent["malformed"] and len(ids) >= expected_sessions:
            break
        time.sleep(0.5)
    time.sleep(2)
    arrivals.stop.set()
    arrivals.join(10)
    count_file.write_text(json.dumps({"records": produced}))
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=300)
    report = _child_report(out, process.returncode, work / "child.log")
    return {
        "produced": produced,
        "produce_seconds": produce_s,
        "sent": sent,
        "expected_sessions": expected_sessions,
        **latency_figures(arrivals.records, topics, args, sent["measured_from_ms"]),
        "run": report,
    }


def _ms(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def latency_figures(
    records: list[tuple[float, str, dict[str, Any]]], topics: dict[str, str],
    args: argparse.Namespace, measured_from_ms: int,
) -> dict[str, Any]:  # fmt: skip
    """Latencies of the records produced after the warm-up (``measured_from_ms``)."""
    dead: list[float] = []
    first_seen: dict[str, float] = {}
    for arrived, topic, value in records:
        if topic == topics["dead"]:
            found = MALFORMED.search(value.get("raw") or "")
            if found and int(found.group(2)) >= measured_from_ms:
                dead.append(arrived - int(found.group(2)))
        elif value["session_id"] not in first_seen and (
            _ms(value["session_start"]) >= measured_from_ms
        ):
            first_seen[value["session_id"]] = arrived - _ms(value["session_end"])
    gap_ms = bench_duration_ms(args.gap)
    sessions = list(first_seen.values())
    return {
        "dead_letter_ms": summary(dead),
        "session_ms": summary(sessions),
        "session_minus_gap_ms": summary([s - gap_ms for s in sessions]),
        "session_revisions": sum(1 for _, t, _ in records if t == topics["sessions"]),
    }


def bench_duration_ms(text: str) -> float:
    from streamwarden.settings.units import parse_duration

    return parse_duration(text).total_seconds() * 1000


def summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {
        "count": len(ordered),
        "p50": round(statistics.median(ordered)),
        "p90": round(pct(0.90)),
        "p99": round(pct(0.99)),
        "max": round(ordered[-1]),
        "min": round(ordered[0]),
    }


# ---------------------------------------------------------------- report


def print_throughput(result: dict[str, Any]) -> bool:
    runs, records = result["runs"], result["records"]
    base = [r for k, r in runs.items() if k.startswith("b")][-1]
    produce_s = result["produce_seconds"]
    print(f"\n{records:,} records; producing them to the topic took {produce_s:.1f} s\n")
    print(
        "| run | seconds | records/s | vs (b) | JVM CPU s | driver Python CPU s | addBatch s "
        "| sink write_batch s | sessions | events in sessions | dead letters | accounting |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    balanced = True
    for key, r in runs.items():
        sinks = ", ".join(f"{k.split(':')[1]} {v:.1f}" for k, v in r["sink_seconds"].items())
        balanced &= bool(r["balanced"])
        print(
            f"| {RUN_NAMES[key[0]]}{key[1:]} | {r['seconds']:.1f} | {records / r['seconds']:,.0f} "
            f"| {base['seconds'] / r['seconds']:.2f}x | {r['cpu_seconds']:.1f} "
            f"| {r.get('python_cpu_seconds', float('nan')):.1f} "
            f"| {r['add_batch_s']:.1f} | {sinks} | {r['sessions']} | {r['events_in_sessions']} "
            f"| {r['dead_letters']} | {'balanced' if r['balanced'] else 'NOT BALANCED'} |"
        )
    return balanced


def print_latency(result: dict[str, Any]) -> bool:
    print(f"\nlatency: {json.dumps({k: v for k, v in result.items() if k != 'run'})}")
    print(f"latency run accounting: {result['run']['accounting']}")
    return bool(result["run"]["balanced"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--runs", default="b,a,c", help="throughput runs in order (of b, a, c)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--rate", type=float, default=2000, help="latency: records per second")
    parser.add_argument("--seconds", type=float, default=60, help="latency: seconds measured")
    parser.add_argument(
        "--warmup", type=float, default=20, help="latency: seconds of input before measuring"
    )
    parser.add_argument("--gap", default="5s", help="latency: the session gap")
    parser.add_argument("--delay", default="1s", help="latency: max_out_of_orderness")
    parser.add_argument("--live-users", dest="users_live", type=int, default=400)
    parser.add_argument("--pages", type=int, default=10, help="latency: events per session")
    parser.add_argument("--malformed-every", type=int, default=50)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    document: dict[str, Any] = {
        "args": vars(args) | {"child": None},
        "load_before": os.getloadavg(),
    }
    ok = True
    with LocalBroker() as broker:
        if not args.skip_throughput:
            document["throughput"] = throughput(args, broker)
            ok &= print_throughput(document["throughput"])
        if not args.skip_latency:
            live = argparse.Namespace(**{**vars(args), "users": args.users_live})
            document["latency"] = latency(live, broker)
            ok &= print_latency(document["latency"])
    document["load_after"] = os.getloadavg()
    print(f"\nload average before {document['load_before']}, after {document['load_after']}")
    (HERE / "out" / "kafka.json").write_text(json.dumps(document, indent=2, default=str))
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
