"""Real checkpoints made by real Spark runs, shared by the checkpoint tool tests.

- ``sessions_checkpoint``: streamwarden's sessions pipeline, stopped with sessions still open
  (state bounded by timers: must not be flagged).
- ``leaky_aggregation_checkpoint``: a streaming count per user with no watermark (state that
  nothing will ever remove: must be flagged).
- ``forgetful_tws_checkpoint``: a transformWithState that forgets the timer for half its keys
  (exactly those keys must be flagged).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from tests.support import pipeline_config, write_batches

SESSIONS_SPEC = TrafficSpec(
    users=120,
    events=1_200,
    rate_per_second=0.2,
    events_per_file=1_200,
    ts_format="millis",
    seed=5,
)


@pytest.fixture(scope="session")
def sessions_checkpoint(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sessions-cp")
    generate_traffic(SESSIONS_SPEC, root / "landing")
    config = pipeline_config(root, sessions={"allowed_lateness": "10m"})
    Pipeline(config, spark).run(once=True)
    return config.checkpoint.path


@pytest.fixture(scope="session")
def leaky_aggregation_checkpoint(spark, tmp_path_factory) -> Path:
    """``groupBy(user_id).count()`` on a stream, without a watermark: 30 users, 2 batches."""
    root = tmp_path_factory.mktemp("leaky-cp")
    lines = [f'{{"user_id": "u{i % 30:02d}", "n": {i}}}' for i in range(90)]
    write_batches(root / "landing", [lines[:45], lines[45:]])
    counts = (
        spark.readStream.schema("user_id string, n long")
        .option("maxFilesPerTrigger", 1)
        .json(str(root / "landing"))
        .groupBy("user_id")
        .count()
    )
    query = (
        counts.writeStream.outputMode("update")
        .format("noop")
        .option("checkpointLocation", str(root / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return root / "checkpoint"


@pytest.fixture(scope="session")
def forgetful_tws_checkpoint(spark, tmp_path_factory) -> Path:
    """A Python transformWithState count per user that registers a timer for even users only
    (the bug of a code path that forgets its deadline): 15 of 30 keys leak."""
    from pyspark.sql import Row
    from pyspark.sql.streaming import StatefulProcessor

    class ForgetfulCounter(StatefulProcessor):  # local: pickled by value for the workers
        def init(self, handle):
            self.handle = handle
            self.count = handle.getValueState("count", "n long")

        def handleInputRows(self, key, rows, timerValues):
            times = [int(r["ts"].timestamp() * 1000) for r in rows]
            n = (self.count.get()[0] if self.count.exists() else 0) + len(times)
            if int(key[0][1:]) % 2 == 0:
                self.handle.registerTimer(max(times) + 24 * 3600 * 1000)
            self.count.update((n,))
            yield Row(user_id=key[0], n=n)

        def close(self):
            pass

    root = tmp_path_factory.mktemp("forgetful-cp")
    lines = [
        f'{{"user_id": "u{i % 30:02d}", "ts": "2026-01-01T00:{i % 60:02d}:00Z"}}' for i in range(60)
    ]
    write_batches(root / "landing", [lines])
    counts = (
        spark.readStream.schema("user_id string, ts timestamp")
        .json(str(root / "landing"))
        .withWatermark("ts", "1 minute")
        .groupBy("user_id")
        .transformWithState(ForgetfulCounter(), "user_id string, n long", "Update", "EventTime")
    )
    query = (
        counts.writeStream.outputMode("update")
        .format("noop")
        .option("checkpointLocation", str(root / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return root / "checkpoint"
