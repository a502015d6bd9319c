"""An interval join of two sources as a pipeline runs it (``operator = "join"``): inner and
left-outer results equal a pandas computation of the same join over the rows the watermark let
in, whichever batch each side's rows came in; rows later than the lateness are ``too_late`` dead
letters naming their source; an idle input still writes the unmatched left rows and frees every
row; the accounting counts each source's records."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.idle import write_tick
from streamwarden.pipeline.outputs import read_output
from streamwarden.pipeline.runner import ticks_dir
from streamwarden.sinks.parquet import batch_dir_name
from tests.support import T0_MS, kill_when_written, run_command, write_batches

pytestmark = pytest.mark.spark

MIN = 60_000
UPPER = 10 * MIN
LATENESS = 2 * MIN
SCHEMAS = {
    "payments": {
        "key": "payment_id",
        "time": "at",
        "fields": "payment_id STRING, account STRING, at BIGINT, amount DOUBLE",
    },
    "refunds": {
        "key": "payment_id",
        "time": "at",
        "fields": "payment_id STRING, at BIGINT, amount DOUBLE",
    },
}


def join_config(root: Path, **join: Any) -> PipelineConfig:
    return parse_config(
        {
            "name": "join-test",
            "operator": "join",
            "sources": {
                name: {"path": str(root / name), "max_files_per_trigger": 1} for name in SCHEMAS
            },
            "schemas": SCHEMAS,
            "join": {
                "left": "payments",
                "right": "refunds",
                "on": [["payment_id", "payment_id"]],
                "between": ["0s", "10m"],
                "allowed_lateness": "2m",
                "max_out_of_orderness": "0s",
                **join,
            },
            "sinks": {
                "joined": {"path": str(root / "joined")},
                "dead_letters": {"path": str(root / "dead_letters")},
            },
            "checkpoint": {"path": str(root / "checkpoint")},
            "spark": {"shuffle_partitions": 2},
        },
        origin="test",
    )


def traffic(seed: int, batches: int = 4) -> tuple[list[list[dict]], list[list[dict]]]:
    """Payments, each batch five minutes of event time after the one before, some of them late;
    a refund for about half of them, in the same batch or a later one, some outside the ten
    minutes of their payment, some beyond the lateness."""
    rng = random.Random(seed)
    payments: list[list[dict]] = [[] for _ in range(batches)]
    refunds: list[list[dict]] = [[] for _ in range(batches)]
    for b in range(batches):
        for i in range(12):
            at = T0_MS + b * 5 * MIN + rng.randrange(5 * MIN)
            if rng.random() < 0.15:
                at -= rng.randrange(6 * MIN)  # late: within the lateness or beyond
            pid = f"p{b}-{i}"
            payments[b].append({"payment_id": pid, "account": f"a{i % 5}", "at": at, "amount": i})
            if rng.random() < 0.6:
                later = rng.choice([0, 0, 1, 2])
                refund_at = at + rng.choice([0, rng.randrange(UPPER), UPPER, UPPER + 1000])
                refunds[min(b + later, batches - 1)].append(
                    {"payment_id": pid, "at": refund_at, "amount": -i}
                )
    return payments, refunds


def admitted(payments, refunds):
    """The rows the watermark lets in, per side, and those too late: Spark's batch N runs under
    the watermark of batches 0..N-1 of both sources (delay 0); a row more than the lateness
    behind it is too late."""
    kept: dict[str, list[dict]] = {"payments": [], "refunds": []}
    late: list[tuple[str, int]] = []
    watermark = None
    for batch in zip(payments, refunds, strict=True):
        for name, rows in zip(("payments", "refunds"), batch, strict=True):
            for r in rows:
                if watermark is not None and r["at"] < watermark - LATENESS:
                    late.append((name, r["at"]))
                else:
                    kept[name].append(r)
        top = max(r["at"] for rows in batch for r in rows)
        watermark = top if watermark is None else max(watermark, top)
    return kept, late


def pandas_join(kept: dict[str, list[dict]], how: str) -> pd.DataFrame:
    left = pd.DataFrame(kept["payments"]).add_prefix("payments_")
    right = pd.DataFrame(kept["refunds"]).add_prefix("refunds_")
    pairs = left.merge(right, left_on="payments_payment_id", right_on="refunds_payment_id")
    delay = pairs["refunds_at"] - pairs["payments_at"]
    pairs = pairs[(delay >= 0) & (delay <= UPPER)]
    if how == "left_outer":
        unmatched = left[~left["payments_payment_id"].isin(pairs["payments_payment_id"])]
        pairs = pd.concat([pairs, unmatched])
    return _sorted(pairs)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    columns = sorted(frame.columns)
    frame = frame[columns].astype(object).where(frame[columns].notna(), None)
    return frame.sort_values(["payments_payment_id", "payments_at"], key=lambda c: c.astype(str))[
        columns
    ].reset_index(drop=True)


def write_sources(root: Path, payments, refunds) -> None:
    write_batches(root / "payments", [[json.dumps(r) for r in b] for b in payments])
    write_batches(root / "refunds", [[json.dumps(r) for r in b] for b in refunds])


@pytest.mark.parametrize("how", ["inner", "left_outer"])
def test_the_join_equals_pandas_and_late_rows_are_dead_letters_of_their_source(
    spark, tmp_path, how
):
    payments, refunds = traffic(seed=41)
    write_sources(tmp_path, payments, refunds)
    config = join_config(tmp_path, type=how)
    run = Pipeline(config, spark).run(once=True, drain=True)

    kept, late = admitted(payments, refunds)
    assert {name for name, _ in late} == {"payments", "refunds"}  # late rows on either side
    joined = read_output(spark, tmp_path / "joined")
    assert joined is not None
    got = _sorted(joined.drop("batch_id").toPandas())
    pd.testing.assert_frame_equal(got, pandas_join(kept, how), check_dtype=False)

    dead = read_output(spark, tmp_path / "dead_letters")
    assert dead is not None
    assert sorted((d.source, d.reason, json.loads(d.raw)["at"]) for d in dead.collect()) == sorted(
        (name, "too_late", at) for name, at in late
    )
    records = sum(len(b) for b in payments + refunds)
    accounting = account_run(spark, config, records, run.batches)
    assert accounting.balanced, accounting.describe()
    assert "payments: valid events" in accounting.describe()


def test_an_idle_input_writes_the_unmatched_rows_and_frees_every_row(spark, tmp_path):
    payments = [[{"payment_id": "p1", "account": "a", "at": T0_MS, "amount": 1.0}]]
    refunds = [[{"payment_id": "p2", "at": T0_MS + MIN, "amount": -1.0}]]
    write_sources(tmp_path, payments, refunds)
    config = join_config(tmp_path, type="left_outer")
    pipeline = Pipeline(config, spark)
    before = pipeline.run(once=True)
    assert before.progress[-1]["stateOperators"][0]["numRowsTotal"] == 2  # p1 and p2 held
    assert read_output(spark, tmp_path / "joined") is None

    write_tick(ticks_dir(config), T0_MS + 60 * MIN)  # what a continuous run writes when idle
    after = pipeline.run(once=True)
    assert after.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0
    joined = read_output(spark, tmp_path / "joined")
    assert joined is not None
    assert [(r.payments_payment_id, r.refunds_payment_id) for r in joined.collect()] == [
        ("p1", None)
    ]


CRASH_TOML = """
name = "join-crash"
operator = "join"
[sources.payments]
path = "payments"
max_files_per_trigger = 1
[sources.refunds]
path = "refunds"
max_files_per_trigger = 1
[schemas.payments]
key = "payment_id"
time = "at"
fields = "payment_id STRING, account STRING, at BIGINT, amount DOUBLE"
[schemas.refunds]
key = "payment_id"
time = "at"
fields = "payment_id STRING, at BIGINT, amount DOUBLE"
[join]
left = "payments"
right = "refunds"
on = [["payment_id", "payment_id"]]
between = ["0s", "10m"]
type = "left_outer"
allowed_lateness = "2m"
max_out_of_orderness = "0s"
[sinks.joined]
path = "joined"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""


@pytest.mark.soak  # fault injection: two pipeline processes, one SIGKILLed (make soak)
def test_a_killed_run_resumes_to_the_joined_rows_of_an_uninterrupted_run(spark, tmp_path):
    payments, refunds = traffic(seed=43, batches=6)
    reference, crashed = tmp_path / "reference", tmp_path / "crashed"
    for root in (reference, crashed):
        write_sources(root, payments, refunds)
        (root / "pipeline.toml").write_text(CRASH_TOML)
    subprocess.run(run_command(reference / "pipeline.toml", "--once", "--drain"), check=True)

    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    kill_when_written(command, crashed / "joined" / batch_dir_name(2))
    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr[-2000:]

    def rows(root: Path) -> pd.DataFrame:
        frame = read_output(spark, root / "joined")
        assert frame is not None
        return _sorted(frame.drop("batch_id").toPandas())

    pd.testing.assert_frame_equal(rows(crashed), rows(reference))
    kept, _ = admitted(payments, refunds)
    pd.testing.assert_frame_equal(rows(crashed), pandas_join(kept, "left_outer"), check_dtype=False)
