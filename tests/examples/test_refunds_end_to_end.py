"""The refunds example end to end, as the README's tour runs it (``streamwarden demo --example
refunds``, in the test's process, smaller): an interval join of two sources, card payments and
their refunds in two landing folders (``examples/refunds_join.toml``). The joined rows equal a
pandas computation of the left-outer join over the rows the watermark let in (batch N reads the
N-th file of each source), the plain-Python model the demo checks against agrees, rows later
than the lateness are ``too_late`` dead letters naming their source, every hostile record is a
dead letter with the reason it was made for, and the run's accounting balances."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.cli.main import main
from streamwarden.local.examples.catalog import generate_example
from streamwarden.local.examples.refunds import RefundsSummary, expected_join
from streamwarden.pipeline.outputs import read_output

pytestmark = pytest.mark.spark

ACCOUNTS, BATCHES, SEED = 60, 8, 11
# examples/refunds_join.toml
WITHIN, LATENESS, DELAY = timedelta(hours=2), timedelta(minutes=10), timedelta(minutes=1)
DEMO = ["demo", "--example", "refunds", "--users", str(ACCOUNTS), "--batches", str(BATCHES)]
COLUMNS = ["payments_payment_id", "payments_amount", "refunds_refund_id", "refunds_amount"]


def ms(duration: timedelta) -> int:
    return duration // timedelta(milliseconds=1)


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = Path(tmp_path_factory.mktemp("refunds"))
    out = io.StringIO()
    with redirect_stdout(out):  # the demo's JVM is the shared session's
        code = main([*DEMO, "--seed", str(SEED), "--out", str(root / "demo")])
    assert code == 0, out.getvalue()[-3000:]
    # the same generator, seed and sizes: the same records, the truth by construction
    summary = generate_example("refunds", root / "truth", seed=SEED, size=ACCOUNTS, files=BATCHES)
    assert isinstance(summary, RefundsSummary)
    joined = read_output(spark, root / "demo" / "joined")
    dead = read_output(spark, root / "demo" / "dead_letters")
    assert joined is not None and dead is not None
    return {
        "summary": summary,
        "printed": out.getvalue(),
        "joined": joined.toPandas(),
        "dead": dead.collect(),
        "pandas": pandas_join(summary),
    }


def landed(summary: RefundsSummary) -> pd.DataFrame:
    """Every valid record as written: its source, its batch (the file's place among its
    source's files) and its fields, ``at`` in epoch ms."""
    valid = {json.dumps(r.record(), sort_keys=True) for r in [*summary.payments, *summary.refunds]}
    rows = []
    for source in ("payments", "refunds"):
        files = sorted(p for p in summary.files if p.parent.name == source)
        for batch, path in enumerate(files):
            for line in path.read_bytes().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if json.dumps(record, sort_keys=True) in valid:
                    at = pd.Timestamp(record["at"]).value // 1_000_000
                    rows.append({**record, "source": source, "batch": batch, "at_ms": at})
    return pd.DataFrame(rows)


def pandas_join(summary: RefundsSummary) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The left-outer interval join, and the too-late rows: batch N runs under the watermark of
    batches 0..N-1 of both sources (their latest time less ``DELAY``); a row more than the
    lateness behind it is too late."""
    df = landed(summary)
    latest = df.groupby("batch")["at_ms"].max().sort_index().cummax()
    watermark = (latest - ms(DELAY)).shift(1)
    too_late = df["at_ms"] < df["batch"].map(watermark) - ms(LATENESS)
    kept = df[~too_late]
    left = kept[kept.source == "payments"][["payment_id", "amount", "at_ms"]]
    right = kept[kept.source == "refunds"][["refund_id", "payment_id", "amount", "at_ms"]]
    left, right = left.add_prefix("payments_"), right.add_prefix("refunds_")
    pairs = left.merge(right, left_on="payments_payment_id", right_on="refunds_payment_id")
    after = pairs["refunds_at_ms"] - pairs["payments_at_ms"]
    pairs = pairs[(after >= 0) & (after <= ms(WITHIN))]
    alone = left[~left.payments_payment_id.isin(pairs.payments_payment_id)]
    return pd.concat([pairs, alone])[COLUMNS], df[too_late]


def rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    frame = frame[COLUMNS].astype(object).where(frame[COLUMNS].notna(), None)
    return sorted(map(tuple, frame.to_numpy().tolist()), key=str)


def test_the_joined_rows_equal_a_pandas_computation_of_the_left_outer_join(run) -> None:
    expected, _ = run["pandas"]
    assert expected.refunds_refund_id.notna().any() and expected.refunds_refund_id.isna().any()
    assert rows(run["joined"]) == rows(expected)


def test_the_model_the_demo_checks_against_agrees_with_pandas(run) -> None:
    expected, too_late = run["pandas"]
    model, model_too_late = expected_join(
        run["summary"], within=WITHIN, allowed_lateness=LATENESS, max_out_of_orderness=DELAY
    )
    assert sorted(
        ((r.payment.payment_id, r.refund.refund_id if r.refund else None) for r in model), key=str
    ) == sorted(
        zip(
            expected.payments_payment_id,
            expected.refunds_refund_id.astype(object).where(
                expected.refunds_refund_id.notna(), None
            ),
            strict=True,
        ),
        key=str,
    )
    assert len(model_too_late) == len(too_late)


def test_late_rows_are_too_late_dead_letters_of_their_source(run) -> None:
    _, too_late = run["pandas"]
    assert len(too_late), "no row is too late: the test shows nothing"
    got = sorted((d.source, json.loads(d.raw)["at"]) for d in run["dead"] if d.reason == "too_late")
    assert got == sorted(zip(too_late["source"], too_late["at"], strict=True))


def test_every_hostile_record_is_a_dead_letter_with_the_reason_it_was_made_for(run) -> None:
    reasons = {d.raw: d.reason for d in run["dead"]}
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile


def test_the_demo_says_its_accounting_balances(run) -> None:
    accounting = next(
        line for line in run["printed"].splitlines() if line.startswith("accounting:")
    )
    assert accounting.endswith(": balanced"), accounting
    assert "payments: valid events" in accounting
