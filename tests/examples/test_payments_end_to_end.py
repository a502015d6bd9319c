"""The payments example end to end, through the command line: card payments (a TIMESTAMP
time, a nested ``geo.city``, optional fields) sessionized per account with six declared
aggregates. The final sessions equal a pandas computation over the payments the generator
wrote (late ones that merge two written sessions and late ones into closed sessions among
them), every hostile record is a dead letter with the reason it was made for, and the run's
accounting balances."""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.local.examples.payments import PaymentsSpec, PaymentsSummary, generate_payments
from streamwarden.pipeline.outputs import account, final_sessions, read_output
from tests.examples.support import example_config, run_cli

pytestmark = pytest.mark.spark

GAP = timedelta(minutes=20)  # examples/payments.toml
SPEC = PaymentsSpec(accounts=100, files=20, seed=11)


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = Path(tmp_path_factory.mktemp("payments"))
    summary = generate_payments(SPEC, root / "landing")
    config = example_config("payments", root)
    done = run_cli(config)
    assert done.returncode == 0, done.stderr[-2000:]
    revisions = read_output(spark, root / "sessions")
    dead = read_output(spark, root / "dead_letters")
    assert revisions is not None and dead is not None
    return {
        "summary": summary,
        "revisions": revisions.toPandas(),
        "final": final_sessions(revisions).toPandas(),
        "dead": dead.toPandas(),
        "accounting": account(spark, root / "sessions", root / "dead_letters", summary.records),
    }


def expected_sessions(summary: PaymentsSummary) -> pd.DataFrame:
    """The sessions pandas makes of the accepted payments: a new session per account wherever
    ``GAP`` or more passes, and each aggregate over its payments in event-time order."""
    payments = pd.DataFrame(
        [
            {
                "account": p.account,
                "at_ms": p.at_ms,
                "amount": p.amount,
                "merchant": p.merchant,
                "country": p.country,
                "city": p.city,
            }
            for p in summary.accepted
        ]
    ).sort_values(["account", "at_ms"], kind="stable")
    new = payments.groupby("account")["at_ms"].diff().fillna(GAP.total_seconds() * 1000)
    payments["session"] = (new >= GAP.total_seconds() * 1000).cumsum()

    def aggregate(s: pd.DataFrame) -> pd.Series:
        countries = s["country"].dropna()
        return pd.Series(
            {
                "account": s["account"].iloc[0],
                "start_ms": int(s["at_ms"].min()),
                "end_ms": int(s["at_ms"].max()),
                "event_count": len(s),
                "total": math.fsum(s["amount"]),
                "largest": s["amount"].max(),
                "merchants": s["merchant"].nunique(),
                "first_country": countries.iloc[0] if len(countries) else None,
                "last_country": countries.iloc[-1] if len(countries) else None,
                "cities": [c for c in s["city"] if c is not None],
            }
        )

    return payments.groupby("session").apply(aggregate, include_groups=False).reset_index(drop=True)


def keyed(frame: pd.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["account"], r["start_ms"]): r for r in frame.to_dict("records")}


def test_the_data_holds_merges_and_late_updates_by_construction(run: dict[str, Any]) -> None:
    summary = run["summary"]
    assert summary.bridges and summary.late and summary.too_late and summary.hostile


def test_final_sessions_equal_the_pandas_computation_for_every_aggregate(run) -> None:
    final = run["final"].copy()
    final["start_ms"] = final["session_start"].map(lambda t: int(t.timestamp() * 1000))
    final["end_ms"] = final["session_end"].map(lambda t: int(t.timestamp() * 1000))
    got, want = keyed(final), keyed(expected_sessions(run["summary"]))
    assert sorted(got) == sorted(want)
    for key, expected in want.items():
        session = got[key]
        for column in (
            "end_ms",
            "event_count",
            "largest",
            "merchants",
            "first_country",
            "last_country",
        ):
            assert session[column] == expected[column], (key, column)
        assert session["total"] == expected["total"], key  # exact: fsum, rounded once
        assert list(session["cities"]) == expected["cities"], key


def test_late_payments_merged_written_sessions_and_revised_closed_ones(run) -> None:
    final = run["final"]
    merged = final[final["merged_session_ids"].map(lambda ids: ids is not None and len(ids) > 0)]
    assert len(merged) == len(run["summary"].bridges)
    assert (run["revisions"]["revision"] > 0).sum() >= len(run["summary"].late)


def test_every_hostile_record_is_a_dead_letter_with_the_reason_it_was_made_for(run) -> None:
    reasons = dict(zip(run["dead"]["raw"], run["dead"]["reason"], strict=True))
    for hostile in run["summary"].hostile:
        assert reasons.get(hostile.raw) == hostile.reason.value, hostile
    too_late = Counter(run["dead"]["reason"])["too_late"]
    assert too_late == len(run["summary"].too_late)


def test_every_record_ends_in_one_place(run) -> None:
    summary = run["summary"]
    assert run["final"]["event_count"].sum() + len(run["dead"]) == summary.records
    assert run["accounting"].balanced, run["accounting"].describe()
