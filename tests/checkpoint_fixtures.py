"""Real checkpoints made by real Spark runs, shared by the checkpoint tool tests.

- ``sessions_checkpoint``: streamwarden's sessions pipeline, stopped with sessions still open
  (state bounded by timers: must not be flagged).
- ``leaky_aggregation_checkpoint``: a streaming count per user with no watermark (state that
  nothing will ever remove: must be flagged).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.sources.generator import TrafficSpec, generate_traffic
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
