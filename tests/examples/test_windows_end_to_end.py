"""The windows example end to end, as the README's tour runs it (``streamwarden demo --example
windows``, in the test's process, smaller): card payments counted and summed per merchant in
5-minute windows (``examples/merchant_windows.toml``). The windows equal a pandas computation
over the payments the generator wrote (one file per micro-batch; a payment whose window ended
more than the lateness before its batch's watermark is ``too_late``), the plain-Python model
the demo checks against agrees, every hostile record is a dead letter with the reason it was
made for, and the run's accounting balances."""

from __future__ import annotations

import io
import json
from collections import Counter
from contextlib import redirect_stdout
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.cli.main import main
from streamwarden.local.examples.catalog import generate_example
from streamwarden.local.examples.payments import PaymentsSummary
from streamwarden.local.examples.windows import expected_windows, payments_by_file
from streamwarden.pipeline.outputs import read_output

pytestmark = pytest.mark.spark

ACCOUNTS, BATCHES, SEED = 60, 10, 11
# examples/merchant_windows.toml
SIZE, LATENESS, DELAY = timedelta(minutes=5), timedelta(minutes=30), timedelta(minutes=1)
DEMO = ["demo", "--example", "windows", "--users", str(ACCOUNTS), "--batches", str(BATCHES)]


def ms(duration: timedelta) -> int:
    return duration // timedelta(milliseconds=1)


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = Path(tmp_path_factory.mktemp("windows"))
    out = io.StringIO()
    with redirect_stdout(out):  # the demo's JVM is the shared session's
        code = main([*DEMO, "--seed", str(SEED), "--out", str(root / "demo")])
    assert code == 0, out.getvalue()[-3000:]
    # the same generator, seed and sizes: the same records, the truth by construction
    summary = generate_example("windows", root / "truth", seed=SEED, size=ACCOUNTS, files=BATCHES)
    assert isinstance(summary, PaymentsSummary)
    windows = read_output(spark, root / "demo" / "windows")
    dead = read_output(spark, root / "demo" / "dead_letters")
    assert windows is not None and dead is not None
    return {
        "summary": summary,
        "printed": out.getvalue(),
        "windows": windows.collect(),
        "dead": dead.collect(),
        "pandas": pandas_windows(summary),
    }


def pandas_windows(summary: PaymentsSummary) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The windows by merchant, and the too-late payments, in pandas: batch N runs under the
    watermark of the batches before (their latest time less ``DELAY``)."""
    valid = {json.dumps(p.record(), sort_keys=True): p for p in summary.payments}
    rows = []
    for batch, path in enumerate(summary.files):
        for line in path.read_bytes().splitlines():
            try:
                p = valid.get(json.dumps(json.loads(line), sort_keys=True))
            except ValueError:  # a hostile record: a dead letter of validation
                continue
            if p is not None:
                rows.append((batch, p.merchant, p.account, p.at_ms, p.amount))
    df = pd.DataFrame(rows, columns=["batch", "merchant", "account", "at_ms", "amount"])
    latest = df.groupby("batch")["at_ms"].max().reindex(range(len(summary.files))).cummax()
    watermark = (latest.ffill() - ms(DELAY)).shift(1)
    df["start"] = df["at_ms"] - df["at_ms"] % ms(SIZE)
    too_late = df["start"] + ms(SIZE) + ms(LATENESS) <= df["batch"].map(watermark)
    windows = (
        df[~too_late]
        .groupby(["merchant", "start"])
        .agg(payments=("amount", "size"), total=("amount", "sum"), accounts=("account", "nunique"))
        .reset_index()
    )
    return windows, df[too_late]


def test_the_windows_equal_a_pandas_computation(run) -> None:
    expected, _ = run["pandas"]
    got = sorted(
        (
            w.merchant,
            int(w.window_start.timestamp() * 1000),
            int(w.window_end.timestamp() * 1000) - int(w.window_start.timestamp() * 1000),
            w.payments,
            w.event_count,
            round(w.total, 6),
            w.accounts,
        )
        for w in run["windows"]
    )
    assert got == sorted(
        (m, int(s), ms(SIZE), int(n), int(n), round(t, 6), int(a))
        for m, s, n, t, a in zip(
            expected.merchant,
            expected.start,
            expected.payments,
            expected.total,
            expected.accounts,
            strict=True,
        )
    )


def test_the_model_the_demo_checks_against_agrees_with_pandas(run) -> None:
    expected, too_late = run["pandas"]
    windows, model_too_late = expected_windows(
        payments_by_file(run["summary"].files, run["summary"].payments),
        size=SIZE,
        allowed_lateness=LATENESS,
        max_out_of_orderness=DELAY,
    )
    assert sorted((w.merchant, w.start_ms, w.payments) for w in windows) == sorted(
        zip(expected.merchant, expected.start.astype(int), expected.payments, strict=True)
    )
    assert len(model_too_late) == len(too_late)


def test_too_late_and_hostile_records_are_dead_letters_with_their_reason(run) -> None:
    _, too_late = run["pandas"]
    assert len(too_late), "no payment is too late: the test shows nothing"
    assert Counter(d.reason for d in run["dead"])["too_late"] == len(too_late)
    reasons = {d.raw: d.reason for d in run["dead"]}
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile


def test_the_demo_says_its_accounting_balances(run) -> None:
    accounting = next(
        line for line in run["printed"].splitlines() if line.startswith("accounting:")
    )
    assert accounting.endswith(": balanced"), accounting
    assert "windows: " in run["printed"] and "(as put in)" in run["printed"]
