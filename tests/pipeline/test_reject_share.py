"""A run whose records mostly become dead letters stops, loudly: a typo in ``[schema]`` (every
record ``missing_field``) or times in the wrong unit must not end with exit 0 and an empty
output. The guard counts a run's records and dead letters batch by batch, and stops it once
more than ``validation.max_dead_letter_share`` of at least ``dead_letter_share_min_records``
records were dead letters, naming the top reasons and a sample."""

from __future__ import annotations

from typing import Any

import pytest

from streamwarden.errors import PipelineError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.reject_share import DeadLetterShareError, RejectShareGuard
from streamwarden.pipeline.supervisor import is_restartable
from streamwarden.validation.settings import ValidationConfig
from tests.support import PAGEVIEW_SCHEMA, pageview, pipeline_config, write_batches


def guard(**settings: Any) -> RejectShareGuard:
    return RejectShareGuard("p", ValidationConfig(**settings), lambda reason: f"a {reason} one")


def test_a_run_under_the_minimum_of_records_is_never_stopped() -> None:
    g = guard(dead_letter_share_min_records=100)
    g.observe(99, {"missing_field": 99})  # all rejected, but too few to judge


def test_a_run_over_the_share_is_stopped_naming_the_top_reasons_and_a_sample() -> None:
    g = guard(max_dead_letter_share=0.5, dead_letter_share_min_records=10)
    g.observe(6, {"wrong_type": 2})
    with pytest.raises(DeadLetterShareError) as caught:
        g.observe(6, {"missing_field": 4, "wrong_type": 1})
    message = str(caught.value)
    assert "7 of its 12 records (58%) were dead letters" in message
    assert "max_dead_letter_share 0.5 (top reasons: missing_field 4, wrong_type 3)" in message
    assert "a missing_field record: a missing_field one" in message
    assert "streamwarden doctor" in message


def test_a_share_at_the_limit_goes_on() -> None:
    g = guard(max_dead_letter_share=0.5, dead_letter_share_min_records=10)
    g.observe(10, {"too_late": 5})


def test_a_share_of_one_never_stops_a_run() -> None:
    g = guard(max_dead_letter_share=1.0, dead_letter_share_min_records=1)
    g.observe(10, {"malformed_json": 10})


def test_the_stop_is_not_restarted() -> None:
    error = DeadLetterShareError("x")
    assert isinstance(error, PipelineError) and not is_restartable(error)


@pytest.mark.spark
def test_a_misspelt_key_stops_the_run_instead_of_rejecting_every_record_in_silence(
    spark: Any, tmp_path
) -> None:
    write_batches(tmp_path / "landing", [[pageview(f"u{i}", i) for i in range(120)]])
    typo = {**PAGEVIEW_SCHEMA, "key": "userid"}
    typo["fields"] = typo["fields"].replace("user_id STRING", "userid STRING")
    config = pipeline_config(tmp_path, schema=typo)
    with pytest.raises(DeadLetterShareError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert "120 of its 120 records (100%) were dead letters" in message
    assert "top reasons: missing_field 120" in message
    assert "required field 'userid' is missing" in message
