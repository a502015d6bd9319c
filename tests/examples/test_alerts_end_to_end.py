"""The alerts example end to end, through the command line (``streamwarden run``, in the test's
process): ``examples/alerts.py``'s
``BigPaymentAlert`` (a keyed processor in Python, ``operator = "process"``) over generated card
payments. Its alerts equal a pandas computation of the rule (per account, a rolling window of
the five amounts before each payment, all within a day of it), and the plain-Python model of
:mod:`streamwarden.local.examples.alerts` (the guard's rules worked out batch by batch) agrees;
every payment behind the watermark is a ``too_late`` dead letter, every hostile record one with
the reason it was made for, the run's accounting balances, and the drain leaves no state."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.local.examples.alerts import expected_alerts
from streamwarden.local.examples.payments import Payment, PaymentsSpec, generate_payments
from streamwarden.monitoring.progress_log import read_progress_log
from streamwarden.operators.base import account_run
from streamwarden.operators.process.operator import ProcessBatchStats
from streamwarden.pipeline.outputs import read_output
from tests.examples.support import EXAMPLES

pytestmark = pytest.mark.spark

SPEC = PaymentsSpec(accounts=60, files=10, seed=11)
DELAY = timedelta(minutes=1)  # examples/payment_alerts.toml: [process] max_out_of_orderness
DAY_MS = 24 * 3600 * 1000  # examples/alerts.py: an amount is forgotten a day after it
LAST = 5  # ... and the mean is over the last five


def pandas_alerts(
    files: list[Path], payments: list[Payment], delay: timedelta
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The alerts, and the too-late payments, in pandas: one file per micro-batch, a payment
    behind the batch's watermark (the latest event time of the files before, less ``delay``)
    is too late; of the others, per account in the order the pipeline takes them (file, then
    event time), a payment is an alert when the five before it are all within a day of it and
    it is over ten times their mean."""
    valid = {json.dumps(p.record(), sort_keys=True): p for p in payments}
    rows = []
    for batch, path in enumerate(files):
        for line in path.read_bytes().splitlines():
            try:
                p = valid.get(json.dumps(json.loads(line), sort_keys=True))
            except ValueError:  # a hostile record: a dead letter of validation
                continue
            if p is not None:
                rows.append((batch, len(rows), p.account, p.at_ms, p.amount))
    df = pd.DataFrame(rows, columns=["batch", "order", "account", "at_ms", "amount"])
    latest = df.groupby("batch")["at_ms"].max().reindex(range(len(files))).cummax().ffill()
    watermark = (latest - delay // timedelta(milliseconds=1)).shift(1).fillna(0).clip(lower=0)
    too_late = df["at_ms"] < df["batch"].map(watermark)
    taken = df[~too_late].sort_values(["account", "batch", "at_ms", "order"], kind="stable")
    accounts = taken["account"]
    amounts_before = taken.groupby("account")["amount"].shift(1).groupby(accounts)
    times_before = taken.groupby("account")["at_ms"].shift(1).groupby(accounts)
    taken = taken.assign(
        # the mean as the processor sums it: oldest first
        mean_before=amounts_before.transform(
            lambda s: s.rolling(LAST).apply(lambda w: sum(w) / LAST, raw=True)
        ),
        oldest_before=times_before.transform(lambda s: s.rolling(LAST).min()),
    )
    alert = (taken["at_ms"] <= taken["oldest_before"] + DAY_MS) & (
        taken["amount"] > 10 * taken["mean_before"]
    )
    return taken[alert], df[too_late]


def alerts_config(root: Path) -> Path:
    """``examples/payment_alerts.toml`` with its folders under ``root``; its processor module
    still found in ``examples/``."""
    data: dict[str, Any] = tomllib.loads((EXAMPLES / "payment_alerts.toml").read_text())
    data["source"]["path"] = str(root / "landing")
    data["sinks"] = {n: {**s, "path": str(root / n)} for n, s in data["sinks"].items()}
    data["checkpoint"]["path"] = str(root / "checkpoint")
    data["process"]["python_path"] = [str(EXAMPLES)]
    data["spark"] = {**data["spark"], "shuffle_partitions": 2}
    data["monitoring"] = {"prometheus_port": "off"}
    path = root / "payment_alerts.yaml"
    path.write_text(json.dumps(data, default=str))
    return path


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = Path(tmp_path_factory.mktemp("alerts"))
    summary = generate_payments(SPEC, root / "landing")
    config = alerts_config(root)
    # the command line in this process: its JVM is the shared session's (a second one would
    # cost its start-up, which the other examples' tests already measure)
    assert main(["run", str(config), "--once", "--drain"]) == 0
    alerts = read_output(spark, root / "output")
    dead = read_output(spark, root / "dead_letters")
    assert dead is not None
    progress = [r.progress for r in read_progress_log(Path(f"{root / 'checkpoint'}.progress"))]
    batches = [b for p in progress if (b := ProcessBatchStats.from_progress(p)) is not None]
    return {
        "summary": summary,
        "alerts": [] if alerts is None else alerts.collect(),
        "dead": dead.collect(),
        "pandas": pandas_alerts(summary.files, summary.payments, DELAY),
        "model": expected_alerts(summary.files, summary.payments, DELAY),
        "accounting": account_run(spark, load_config(config), summary.records, batches),
        "state_rows": [sum(o["numRowsTotal"] for o in p["stateOperators"]) for p in progress],
    }


def test_the_alerts_equal_a_pandas_computation_of_the_rule(run) -> None:
    expected, _ = run["pandas"]
    assert len(expected), "the generated payments hold no outsized payment: the test shows nothing"
    got = sorted(
        (a.account, int(a.at.timestamp() * 1000), a.amount, a.mean_before) for a in run["alerts"]
    )
    assert got == sorted(
        zip(expected.account, expected.at_ms, expected.amount, expected.mean_before, strict=True)
    )


def test_the_plain_python_model_of_the_guard_s_rules_agrees_with_pandas(run) -> None:
    (alerts, too_late), (model_alerts, model_too_late) = run["pandas"], run["model"]
    assert sorted(zip(alerts.account, alerts.at_ms, alerts.amount, strict=True)) == sorted(
        (a.account, a.at_ms, a.amount) for a in model_alerts
    )
    assert len(too_late) == len(model_too_late)


def test_payments_behind_the_watermark_are_too_late_dead_letters(run) -> None:
    _, too_late = run["pandas"]
    dead = Counter(d.reason for d in run["dead"])
    assert len(too_late) and dead["too_late"] == len(too_late)


def test_every_hostile_record_is_a_dead_letter_with_the_reason_it_was_made_for(run) -> None:
    reasons = {d.raw: d.reason for d in run["dead"]}
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile


def test_the_run_s_accounting_balances_and_the_drain_leaves_no_state(run) -> None:
    assert run["accounting"].balanced, run["accounting"].describe()
    assert max(run["state_rows"]) > 0 and run["state_rows"][-1] == 0
