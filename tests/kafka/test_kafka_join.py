"""Several sources of different kinds in one pipeline: payments from a Kafka topic joined with
refunds from landing files, each source with its own offsets in the checkpoint; the joined rows
equal pandas' and a second run reads nothing twice."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from streamwarden.config import parse_config
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.kafka.support import produce, topic_name
from tests.pipeline.test_join_pipeline import MIN, SCHEMAS, UPPER, _sorted
from tests.support import T0_MS, write_batches

pytestmark = pytest.mark.spark


def test_a_kafka_source_and_a_files_source_join_exactly_once(spark, kafka_broker, workdir):
    topic = topic_name("payments")
    kafka_broker.create_topic(topic)
    payments = [
        {"payment_id": f"p{i}", "account": f"a{i % 3}", "at": T0_MS + i * MIN, "amount": i}
        for i in range(8)
    ]
    refunds = [
        {"payment_id": f"p{i}", "at": T0_MS + i * MIN + delay, "amount": -i}
        for i, delay in ((1, 0), (2, 5 * MIN), (4, UPPER), (5, UPPER + 1), (7, 3 * MIN))
    ]
    produce(kafka_broker, topic, [json.dumps(p) for p in payments])
    write_batches(workdir / "refunds", [[json.dumps(r) for r in refunds]])
    config = parse_config(
        {
            "name": "kafka-join",
            "operator": "join",
            "sources": {
                "payments": {"kind": "kafka", "topics": [topic]},
                "refunds": {"path": str(workdir / "refunds")},
            },
            "schemas": SCHEMAS,
            "kafka": {"bootstrap_servers": kafka_broker.bootstrap_servers},
            "join": {
                "left": "payments",
                "right": "refunds",
                "on": [["payment_id", "payment_id"]],
                "between": ["0s", "10m"],
                "max_out_of_orderness": "0s",
            },
            "sinks": {
                "joined": {"path": str(workdir / "joined")},
                "dead_letters": {"path": str(workdir / "dead_letters")},
            },
            "checkpoint": {"path": str(workdir / "checkpoint")},
            "spark": {"shuffle_partitions": 2},
            "monitoring": {"prometheus_port": "off"},
        },
        origin="test",
    )
    first = Pipeline(config, spark).run(once=True, drain=True)
    again = Pipeline(config, spark).run(once=True, drain=True)  # nothing new in either source

    joined = read_output(spark, workdir / "joined")
    assert joined is not None
    left = pd.DataFrame(payments).add_prefix("payments_")
    right = pd.DataFrame(refunds).add_prefix("refunds_")
    pairs = left.merge(right, left_on="payments_payment_id", right_on="refunds_payment_id")
    pairs = pairs[(pairs["refunds_at"] - pairs["payments_at"]).between(0, UPPER)]
    pd.testing.assert_frame_equal(
        _sorted(joined.drop("batch_id").toPandas()), _sorted(pairs), check_dtype=False
    )
    assert sorted(joined.toPandas()["payments_payment_id"]) == ["p1", "p2", "p4", "p7"]
    assert read_output(spark, workdir / "dead_letters") is None
    accounting = account_run(spark, config, len(payments) + len(refunds), first.batches)
    assert accounting.balanced, accounting.describe()
    assert "payments: valid events 8 + rejected 0; refunds: valid events 5" in (
        accounting.describe()
    )
    assert sum(b.joined for b in again.batches) == 0
