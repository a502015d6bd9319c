"""Soak (``make soak``): the bounded-state check over 24 simulated hours in 15-minute batches."""

from __future__ import annotations

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.sources.generator import TrafficSpec, generate_traffic
from tests.pipeline.test_bounded_state import expected_state_rows
from tests.support import pipeline_config

pytestmark = pytest.mark.soak

SPEC = TrafficSpec(
    users=2_000,
    events=105_000,
    rate_per_second=1.0,
    sessions_per_user=2,
    events_per_file=1_050,
    ts_format="millis",
    seed=12,
)


def test_state_rows_equal_active_users_for_a_simulated_day(spark, tmp_path):
    summary = generate_traffic(SPEC, tmp_path / "landing")
    result = Pipeline(pipeline_config(tmp_path, sessions={"allowed_lateness": "10m"}), spark).run(
        once=True
    )
    observed = [
        p["stateOperators"][0]["numRowsTotal"] for p in result.progress if p["numInputRows"] > 0
    ]
    expected = expected_state_rows(summary.files)
    print(
        "\n".join(
            f"{i:4d} {o:6d} {e:6d}" for i, (o, e) in enumerate(zip(observed, expected, strict=True))
        )
    )
    assert all(abs(o - e) <= 0.1 * e for o, e in list(zip(observed, expected, strict=True))[4:])
    half = observed[len(observed) // 2 :]
    assert max(half) <= 1.2 * min(half)
