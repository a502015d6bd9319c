"""Lesson L5 on a real broker: one partition of a 4-partition topic runs 20 minutes behind the
others, which keep the watermark moving, so every record of the slow partition arrives late.

With an allowed lateness that covers the lag, every session is what the events make it, and a
session gets at most one update per micro-batch however many late events it receives. With a
smaller lateness, the records beyond it are ``too_late`` dead letters, counted: nothing is lost.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from streamwarden.operators.base import account_run
from streamwarden.operators.sessions.accounting import final_sessions
from streamwarden.pipeline import Pipeline
from streamwarden.sinks.base import open_sink
from streamwarden.sinks.kafka import BATCH_HEADER
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.support import minutes

pytestmark = pytest.mark.spark

LAG_MINUTES = 20
STEPS = 120  # one event per user per simulated minute
ROUND_MINUTES = 20  # produced, then read by one run (one micro-batch: no offset limit)
#: Rounds shorter than the lag: each round's slow records are all further behind the watermark
#: than a 5-minute lateness. (In rounds as long as the lag, a round's newest slow records are at
#: the watermark and open the session that its older ones, waiting for the rest of the batch,
#: then join: nothing is too late.)
SHORT_ROUND_MINUTES = 10
FAST_USERS = [f"fast-{i}" for i in range(6)]
SLOW_USERS = [f"slow-{i}" for i in range(3)]


def _event(user: str, minute: int) -> str:
    return json.dumps({"user_id": user, "ts": minutes(minute), "page_number": 1})


def _bursts(minute: int) -> bool:
    """Users browse 40 minutes, pause 20 (longer than the 10-minute gap), and again."""
    return minute % 60 < 40


def _produce_round(broker, topic: str, round_: int, minutes_: int) -> int:
    """One round of ``minutes_``: partitions 0-2 get the fast users' events of these minutes;
    partition 3 the slow users' events LAG_MINUTES behind them. A pipeline run reads each
    round as it arrives, as a stream would, so the slow partition's records reach it late."""
    per_partition: dict[int, list[str]] = defaultdict(list)
    for minute in range(round_ * minutes_, (round_ + 1) * minutes_):
        for i, user in enumerate(FAST_USERS):
            if minute < STEPS and _bursts(minute):
                per_partition[i % 3].append(_event(user, minute))
        slow_minute = minute - LAG_MINUTES
        if slow_minute >= 0 and _bursts(slow_minute):
            per_partition[3] += [_event(user, slow_minute) for user in SLOW_USERS]
    return sum(produce(broker, topic, lines, partition=p) for p, lines in per_partition.items())


def _run(spark, broker, workdir, allowed_lateness: str, round_minutes: int = ROUND_MINUTES):
    source, sessions, dead = (topic_name(n) for n in ("lagging", "sessions", "dead"))
    broker.create_topic(source, partitions=4)
    broker.create_topic(sessions)
    broker.create_topic(dead)
    config = kafka_pipeline_config(
        workdir,
        broker,
        {"topics": [source]},
        {"sessions": sessions, "dead_letters": dead},
        sessions={"gap": "10m", "allowed_lateness": allowed_lateness, "max_out_of_orderness": "1m"},
    )
    records, batches, slow_read = 0, [], {}
    rounds = -(-(STEPS + LAG_MINUTES) // round_minutes)  # the last: the slow partition's rest
    for round_ in range(rounds):
        records += _produce_round(broker, source, round_, round_minutes)
        last = round_ == rounds - 1
        result = Pipeline(config, spark).run(once=True, drain=last)
        batches += result.batches
        slow_read |= {p["batchId"]: _read_from_partition_3(p, source) for p in result.progress}
    return config, records, batches, committed_records(broker, sessions), slow_read


def _read_from_partition_3(progress: dict, topic: str) -> int:
    """Records the batch read from the slow partition: all of them late."""
    read = 0
    for source in progress.get("sources", []):
        end, start = source.get("endOffset"), source.get("startOffset")
        end = json.loads(end) if isinstance(end, str) else end
        start = json.loads(start) if isinstance(start, str) else start
        if isinstance(end, dict) and topic in end:
            read += end[topic]["3"] - ((start or {}).get(topic) or {}).get("3", 0)
    return read


def test_with_lateness_covering_the_lag_sessions_are_right_and_updated_once_per_batch(
    spark, kafka_broker, workdir
):
    config, records, batches, revisions, slow_read = _run(spark, kafka_broker, workdir, "30m")

    accounting = account_run(spark, config, records)
    assert accounting.balanced and not accounting.dead_letters, accounting.describe()
    updates = Counter(
        (r["headers"][BATCH_HEADER], r["value"]["session_id"])
        for r in revisions
        if r["value"]["revision"] > 0
    )
    late_updates_by_batch = Counter(batch for batch, _ in updates)
    for stats in batches:  # late records in, the session updates they caused out
        late = slow_read.get(stats.batch_id, 0)
        made = late_updates_by_batch[str(stats.batch_id)]
        print(f"batch {stats.batch_id}: late records {late} (slow partition), updates {made}")
    assert updates and max(updates.values()) == 1  # late updates happened, one per batch each
    rows = open_sink("sessions", config.context).read(spark)
    final = Counter((r["user_id"], r["event_count"]) for r in final_sessions(rows).collect())
    # every user, slow or fast: two bursts of 40 events, each one session
    assert final == Counter({(user, 40): 2 for user in FAST_USERS + SLOW_USERS})


# a second full run of the lag: in the long suite (make soak), for the default run's budget
@pytest.mark.soak
def test_with_a_smaller_lateness_the_records_beyond_it_are_counted_too_late(
    spark, kafka_broker, workdir
):
    config, records, batches, _, _ = _run(
        spark, kafka_broker, workdir, "5m", round_minutes=SHORT_ROUND_MINUTES
    )

    accounting = account_run(spark, config, records)
    assert accounting.balanced, accounting.describe()
    too_late = accounting.dead_letters.get("too_late", 0)
    assert too_late > 0
    assert too_late == sum(b.dead_letters.get("too_late", 0) for b in batches)
