"""``streamwarden demo kafka``, small, on the test session's Spark and broker: the producer runs
while the pipeline reads, the run stops by itself once it has caught up, and every generated
record is accounted for from the output topics."""

from __future__ import annotations

import re

import pytest

from streamwarden.local.demo_kafka import kafka_demo_command

pytestmark = pytest.mark.spark

GENERATED = re.compile(
    r"generated ([\d,]+) records \(([\d,]+) pageviews of [\d,]+ users, ([\d,]+) malformed, "
    r"[\d,]+ late, ([\d,]+) too late\)"
)
ACCOUNTED = re.compile(
    r"records in (\d+) = events (\d+) in (\d+) sessions \+ dead letters (\d+) \((.*)\): (\w+)$"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_kafka_demo_catches_up_drains_and_accounts_for_every_record(
    spark, kafka_broker, workdir, capsys
):
    code = kafka_demo_command(
        workdir / "demo",
        events=1_500,
        users=40,
        seed=3,
        rate=1_000,
        spark=spark,
        bootstrap_servers=kafka_broker.bootstrap_servers,
    )

    out = capsys.readouterr().out
    assert code == 0, out
    generated = GENERATED.search(out)
    assert generated, out
    records, pageviews, malformed, _ = (_number(g) for g in generated.groups())
    assert "caught up: lag 0 on every partition" in out
    assert "draining" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("accounting (read back from the topics): records in ")
    accounted = ACCOUNTED.search(last)
    assert accounted, last
    assert accounted.group(6) == "balanced"
    records_in, events, sessions, dead = (int(accounted.group(i)) for i in range(1, 5))
    reasons = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", accounted.group(5))}
    assert records_in == records == events + dead
    assert sessions > 0
    # every malformed record is a dead letter with its reason; a pageview is in a session or
    # came too late (which ones depends on how the records fell into batches: a record is too
    # late only if an earlier batch moved the watermark past it)
    assert sum(n for reason, n in reasons.items() if reason != "too_late") == malformed
    assert events + reasons.get("too_late", 0) == pageviews
