"""The alerts example end to end, through the command line (``streamwarden run``, in the test's
process): ``examples/alerts.py``'s
``BigPaymentAlert`` (a keyed processor in Python, ``operator = "process"``) over generated card
payments. Its alerts equal the computation of :mod:`streamwarden.local.examples.alerts` (the
same rule worked out batch by batch without Spark), every payment behind the watermark is a
``too_late`` dead letter, every hostile record one with the reason it was made for, the run's
accounting balances, and the drain leaves no state."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.local.examples.alerts import expected_alerts
from streamwarden.local.examples.payments import PaymentsSpec, generate_payments
from streamwarden.monitoring.progress_log import read_progress_log
from streamwarden.operators.base import account_run
from streamwarden.operators.process.operator import ProcessBatchStats
from streamwarden.pipeline.outputs import read_output
from tests.examples.support import EXAMPLES

pytestmark = pytest.mark.spark

SPEC = PaymentsSpec(accounts=60, files=10, seed=11)
DELAY = timedelta(minutes=1)  # examples/payment_alerts.toml: [process] max_out_of_orderness


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
        "expected": expected_alerts(summary.files, summary.payments, DELAY),
        "accounting": account_run(spark, load_config(config), summary.records, batches),
        "state_rows": [sum(o["numRowsTotal"] for o in p["stateOperators"]) for p in progress],
    }


def test_the_alerts_are_the_rule_worked_out_batch_by_batch(run) -> None:
    expected, _ = run["expected"]
    assert expected, "the generated payments hold no outsized payment: the test shows nothing"
    got = sorted(
        (a.account, int(a.at.timestamp() * 1000), a.amount, round(a.mean_before, 9))
        for a in run["alerts"]
    )
    assert got == sorted((a.account, a.at_ms, a.amount, round(a.mean_before, 9)) for a in expected)


def test_payments_behind_the_watermark_are_too_late_dead_letters(run) -> None:
    _, too_late = run["expected"]
    dead = Counter(d.reason for d in run["dead"])
    assert too_late and dead["too_late"] == len(too_late)


def test_every_hostile_record_is_a_dead_letter_with_the_reason_it_was_made_for(run) -> None:
    reasons = {d.raw: d.reason for d in run["dead"]}
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile


def test_the_run_s_accounting_balances_and_the_drain_leaves_no_state(run) -> None:
    assert run["accounting"].balanced, run["accounting"].describe()
    assert max(run["state_rows"]) > 0 and run["state_rows"][-1] == 0
