"""``streamwarden demo kafka``: generated pageviews produced to a local Kafka broker at a steady
rate, sessionized live from the topic into a sessions topic and a dead-letters topic, exactly
once; then drained, and accounted for from the topics.

The run has three parts. A continuous pipeline (trigger every second) reads the ``pageviews``
topic while a background thread produces to it; it stops once the producer has finished and the
pipeline has caught up (lag 0 on every partition, and no input left for a batch), or after
:data:`CATCH_UP_TIMEOUT` if it never does. A ``--once --drain`` run on the same checkpoint then
reads whatever is left and closes every session. Last, the accounting reads both output topics
back as a ``read_committed`` consumer sees them.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.errors import UsageError
from streamwarden.kafka.cluster import QUIET, error_text
from streamwarden.local.broker import LocalBroker
from streamwarden.local.demo_folder import replace_demo_folder
from streamwarden.local.demo_sessions import PAGEVIEWS_AGGREGATES, demo_traffic
from streamwarden.local.examples.pageviews import PAGEVIEW_SCHEMA
from streamwarden.local.generator import TrafficSummary, generate_traffic
from streamwarden.local.producer import produce_lines
from streamwarden.monitoring.summary import source_lag
from streamwarden.operators.base import BatchStats, account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.pipeline.query_runner import user_input_rows
from streamwarden.plan import PipelinePlan
from streamwarden.spark.log_file import spark_logging_to

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["kafka_demo_command", "kafka_demo_config"]

PAGEVIEWS, SESSIONS, DEAD_LETTERS = "pageviews", "sessions", "dead-letters"
#: Partitions of each topic the demo creates.
TOPICS = {PAGEVIEWS: 4, SESSIONS: 2, DEAD_LETTERS: 1}
TRIGGER_INTERVAL = timedelta(seconds=1)
#: How long the continuous run may take to catch up once the producer has finished; then it is
#: stopped anyway (the drain run reads the rest, so nothing is lost, only the live view).
CATCH_UP_TIMEOUT = timedelta(minutes=2)
#: After a batch has caught up, how long to wait for a batch with no input before taking the
#: silence itself as "no new input" (Spark runs no batch when there is nothing to do).
QUIET_WAIT = 3 * TRIGGER_INTERVAL
#: How long creating the topics, and each wait of the threads at the end, may take.
REQUEST_TIMEOUT_S = 30.0


def kafka_demo_config(out: Path, bootstrap_servers: str, *, rate: int) -> PipelineConfig:
    """The sessions demo's pipeline (45 minutes of allowed lateness, url lists) from the
    ``pageviews`` topic to the ``sessions`` and ``dead-letters`` topics, a batch every second
    of at most two seconds of produced records."""
    return parse_config(
        {
            "name": "demo-kafka",
            "source": {
                "kind": "kafka",
                "topics": [PAGEVIEWS],
                "max_offsets_per_trigger": max(2 * rate, 1_000),
            },
            "kafka": {"bootstrap_servers": bootstrap_servers},
            "schema": PAGEVIEW_SCHEMA,
            "sessions": {
                "allowed_lateness": "45m",
                "max_events": 300,
                "aggregates": PAGEVIEWS_AGGREGATES,
            },
            "sinks": {
                "sessions": {"kind": "kafka", "topic": SESSIONS},
                "dead_letters": {"kind": "kafka", "topic": DEAD_LETTERS},
            },
            "checkpoint": {"path": str(out / "checkpoint")},
            "spark": {
                "shuffle_partitions": 2,
                "trigger_interval": f"{int(TRIGGER_INTERVAL.total_seconds())}s",
            },
        },
        origin="demo kafka",
    )


def kafka_demo_command(
    out: Path,
    *,
    events: int,
    users: int,
    seed: int,
    rate: int,
    spark: SparkSession | None = None,
    bootstrap_servers: str | None = None,
) -> int:
    """Runs the demo; exit 1 if its accounting does not balance. ``spark`` and
    ``bootstrap_servers`` may be given (tests share theirs); otherwise the demo starts local
    Spark and a local broker, and stops the broker at the end, on Ctrl-C too."""
    out = replace_demo_folder(out.resolve())
    summary = _generate(out / "generated", events=events, users=users, seed=seed)
    with ExitStack() as stack:
        if bootstrap_servers is None:
            bootstrap_servers = _start_broker(stack, out / "kafka-broker.log")
        client = {"bootstrap.servers": bootstrap_servers}
        create_topics(client, TOPICS)
        listed = (f"{t} ({n} partition{'s' * (n > 1)})" for t, n in TOPICS.items())
        print(f"topics: {', '.join(listed)}")
        config = kafka_demo_config(out, bootstrap_servers, rate=rate)
        if spark is None:
            spark = _start_spark(config, out / "spark.log")
        producer = PacedProducer(client, PAGEVIEWS, _lines(summary), rate)
        stack.callback(producer.stop)
        _run_until_caught_up(spark, config, producer, ProgressPrinter(config), summary.records)
        print("\ndraining: a last run reads what is left and closes every session\n", flush=True)
        Pipeline(config, spark).run(once=True, drain=True, on_progress=ProgressPrinter(config))
        accounting = account_run(spark, config, summary.records)
    print(f"\naccounting (read back from the topics): {accounting.describe()}")
    return 0 if accounting.balanced else 1


def _generate(folder: Path, *, events: int, users: int, seed: int) -> TrafficSummary:
    """The sessions demo's traffic (late, too late and malformed records among it) as files,
    which the producer then sends line by line."""
    spec = demo_traffic(events=events, users=users, seed=seed, files=10)
    summary = generate_traffic(spec, folder)
    print(
        f"generated {summary.records:,} records ({summary.events:,} pageviews of "
        f"{summary.distinct_users:,} users, {sum(summary.malformed.values()):,} malformed, "
        f"{summary.late:,} late, {summary.too_late:,} too late) in {len(summary.files)} files "
        f"under {folder}"
    )
    return summary


def _lines(summary: TrafficSummary) -> Iterator[str]:
    for path in summary.files:
        with path.open(encoding="utf-8") as lines:
            yield from (line.rstrip("\n") for line in lines)


def _start_broker(stack: ExitStack, keep_log: Path) -> str:
    """Starts a local broker that the stack stops (its log copied to ``keep_log`` first, as
    stopping removes the broker's folder); returns its bootstrap servers."""
    print("starting a local Kafka broker ...", flush=True)
    broker = LocalBroker().start()

    def stop() -> None:
        shutil.copyfile(broker.log_path, keep_log)
        broker.stop()
        print(f"stopped the Kafka broker (its log: {keep_log})", flush=True)

    stack.callback(stop)
    print(
        f"local Kafka broker at {broker.bootstrap_servers} (log: {broker.log_path}, copied to "
        f"{keep_log} when it stops)"
    )
    return broker.bootstrap_servers


def _start_spark(config: PipelineConfig, log_file: Path) -> SparkSession:
    print(f"starting local Spark (log: {log_file})", flush=True)
    return spark_logging_to(
        log_file,
        app_name="streamwarden-demo-kafka",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
        jars=PipelinePlan.of(config).jars,
    )


def create_topics(client: dict[str, str], partitions: dict[str, int]) -> None:
    """Creates each topic (one replica) and returns once every partition has a leader. A topic
    that exists already is a usage error: the accounting needs topics holding only this run."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    settings: dict[str, Any] = {**client, "logger": QUIET}
    admin = AdminClient(settings)
    new = [NewTopic(name, num_partitions=n, replication_factor=1) for name, n in partitions.items()]
    futures = admin.create_topics(
        new, operation_timeout=REQUEST_TIMEOUT_S, request_timeout=REQUEST_TIMEOUT_S
    )
    for name, future in futures.items():
        try:
            future.result(REQUEST_TIMEOUT_S)
        except KafkaException as exc:
            raise UsageError(
                f"could not create topic {name!r} on Kafka at {client['bootstrap.servers']!r} "
                f"({error_text(exc)}); the demo needs new, empty topics {', '.join(partitions)}"
            ) from None
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while not all(_leaders(admin, t) == n for t, n in partitions.items()):
        if time.monotonic() > deadline:
            raise UsageError(f"the topics {', '.join(partitions)} got no leaders in time")
        time.sleep(0.05)


def _leaders(admin: Any, topic: str) -> int:
    """How many partitions of ``topic`` have a leader (0 while the broker does not say)."""
    from confluent_kafka import KafkaException

    try:
        found = admin.list_topics(topic=topic, timeout=1.0).topics.get(topic)
    except KafkaException:
        return 0
    if found is None or found.error is not None:
        return 0
    return sum(1 for p in found.partitions.values() if p.leader >= 0 and p.error is None)


class PacedProducer:
    """Produces lines to a topic at ``rate`` records per second, in a background thread."""

    def __init__(self, client: dict[str, str], topic: str, lines: Iterator[str], rate: int):
        self.client, self.topic, self.lines, self.rate = client, topic, lines, rate
        #: Wall-clock time (epoch seconds) at which every record was acknowledged.
        self.finished_at: float | None = None
        self.error: Exception | None = None
        self.done = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="demo-producer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Asks the thread to stop after its current record and waits a bounded while."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(REQUEST_TIMEOUT_S)

    def _produce(self) -> None:
        began = time.monotonic()

        def pace(i: int) -> None:
            if self._stopping.is_set():
                raise _Stopped
            ahead = began + (i + 1) / self.rate - time.monotonic()
            if ahead > 0.01:  # sleep in steps of 10 ms or more, not per record
                self._stopping.wait(ahead)

        try:
            produce_lines(self.client, self.topic, self.lines, on_sent=pace)
            self.finished_at = time.time()
        except _Stopped:
            pass
        except Exception as exc:  # re-raised by the main thread
            self.error = exc
        finally:
            self.done.set()


class _Stopped(Exception):
    """Raised inside the producer's pacing to end it early."""


class CatchUpWatch:
    """The continuous run's progress callback: prints each batch, and notes when a batch that
    began after the producer finished left no lag on any partition of the source."""

    def __init__(
        self, printer: ProgressPrinter, config: PipelineConfig, producer: PacedProducer
    ) -> None:
        self.printer, self.config, self.producer = printer, config, producer
        #: Monotonic time of the first caught-up batch.
        self.caught_up_at: float | None = None
        #: Set by a caught-up batch that had no input: nothing new came.
        self.quiet = threading.Event()

    def __call__(self, progress: dict[str, Any], stats: BatchStats | None) -> None:
        self.printer(progress, stats)
        finished = self.producer.finished_at
        if finished is None or _started(progress) < finished:
            return
        lag = source_lag(progress)
        if len(lag) < TOPICS[PAGEVIEWS] or any(lag.values()):
            return
        if self.caught_up_at is None:
            self.caught_up_at = time.monotonic()
        if user_input_rows(progress, self.config) == 0:
            self.quiet.set()

    def should_stop(self) -> str | None:
        """Why the continuous run should stop now, or None."""
        if self.producer.error is not None:
            return "the producer failed"
        if self.quiet.is_set():
            return "caught up: lag 0 on every partition and a batch with no new input"
        now = time.monotonic()
        if self.caught_up_at is not None and now - self.caught_up_at > QUIET_WAIT.total_seconds():
            return (
                "caught up: lag 0 on every partition, and no batch with new input for "
                f"{QUIET_WAIT.total_seconds():g}s"
            )
        finished = self.producer.finished_at
        if finished is not None and time.time() - finished > CATCH_UP_TIMEOUT.total_seconds():
            return (
                f"not caught up {CATCH_UP_TIMEOUT.total_seconds():g}s after the producer "
                "finished; stopping (the drain run reads the rest)"
            )
        return None


def _started(progress: dict[str, Any]) -> float:
    """When Spark began the batch, in epoch seconds."""
    text = str(progress["timestamp"]).replace("Z", "+00:00")
    return datetime.fromisoformat(text).astimezone(UTC).timestamp()


def _run_until_caught_up(
    spark: SparkSession,
    config: PipelineConfig,
    producer: PacedProducer,
    printer: ProgressPrinter,
    records: int,
) -> None:
    """Runs the pipeline continuously, the producer starting with the query, until the watch
    says it may stop; a watcher thread then stops the query, and the run returns."""
    watch = CatchUpWatch(printer, config, producer)
    finished = threading.Event()
    watcher = threading.Thread(
        target=_stop_when, args=(spark, config.name, watch.should_stop, finished), daemon=True
    )

    def started(_: object) -> None:
        print(
            f"running {config.name!r}: kafka topic {PAGEVIEWS} -> topics {SESSIONS} and "
            f"{DEAD_LETTERS}, a batch every {TRIGGER_INTERVAL.total_seconds():g}s; producing "
            f"{records:,} records at {producer.rate:,}/s\n",
            flush=True,
        )
        producer.start()
        watcher.start()

    try:
        Pipeline(config, spark).run(once=False, on_progress=watch, on_start=started)
    finally:
        finished.set()
    if producer.error is not None:
        raise producer.error


def _stop_when(
    spark: SparkSession, name: str, should_stop: Callable[[], str | None], finished: threading.Event
) -> None:
    """Polls ``should_stop`` until it gives a reason (or the run ended otherwise), then stops
    the running query named ``name`` between two batches (or after :data:`REQUEST_TIMEOUT_S`
    waiting for one to end); the runner then returns as from a finished query."""
    reason = None
    while reason is None and not finished.wait(0.2):
        reason = should_stop()
    if reason is None:
        return
    print(f"\n{reason}", flush=True)
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while not finished.wait(0.1):
        query = next((q for q in spark.streams.active if q.name == name), None)
        if query is None:
            continue  # not started yet
        if not query.status["isTriggerActive"] or time.monotonic() > deadline:
            query.stop()
            return
