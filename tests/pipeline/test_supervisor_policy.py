"""The supervisor's rules, without Spark: which failures are restarted, the backoff, the budget
per window, and the report when it gives up."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from streamwarden.config.model import SupervisorConfig
from streamwarden.errors import (
    CheckpointInUseError,
    ConfigError,
    EngineError,
    PipelineError,
    QueryStartError,
    SinkError,
    SourceError,
    StateError,
    UnreachableError,
)
from streamwarden.monitoring.failures import QueryFailure, error_class_of, file_named_in
from streamwarden.pipeline.supervisor import RestartPolicy, is_restartable, why_not_restarted

MINUTE_MS = 60_000


def policy(**settings: object) -> RestartPolicy:
    config = SupervisorConfig.model_validate(
        {"initial_backoff": "1s", "max_backoff": "8s", "jitter": 0, **settings}
    )
    return RestartPolicy(config, random.Random(1))


@pytest.mark.parametrize("error", [PipelineError, SinkError, SourceError, UnreachableError])
def test_a_failure_a_later_attempt_can_get_past_is_restarted(error):
    assert is_restartable(error("x"))


@pytest.mark.parametrize(
    "error", [ConfigError, StateError, CheckpointInUseError, EngineError, QueryStartError]
)
def test_a_failure_the_same_config_and_checkpoint_repeat_is_not_restarted(error):
    assert not is_restartable(error("x"))
    assert "would fail the same way" in why_not_restarted(error("x"))


def test_an_unexpected_error_is_not_restarted():
    assert not is_restartable(ValueError("a bug"))


def test_the_wait_doubles_from_the_initial_backoff_up_to_the_maximum():
    p = policy(max_restarts=10)
    assert [p.decide(n).wait_s for n in range(6)] == [1, 2, 4, 8, 8, 8]


def test_a_completed_batch_starts_the_backoff_over():
    p = policy(max_restarts=10)
    p.decide(0), p.decide(1)
    p.progressed()
    assert p.decide(2).wait_s == 1


def test_jitter_takes_off_at_most_its_share_of_the_wait():
    p = policy(max_restarts=1000, jitter=0.5)
    waits = [p.decide(n).wait_s for n in range(200)][10:]  # at the 8 s ceiling
    assert all(4 <= w <= 8 for w in waits)
    assert len(set(waits)) > 100  # pipelines failing together do not restart together


def test_the_budget_counts_restarts_within_the_window_and_then_gives_up():
    p = policy(max_restarts=3, window="10m")
    assert [p.decide(m * MINUTE_MS).restart for m in (0, 1, 2)] == [1, 2, 3]
    assert p.decide(3 * MINUTE_MS).give_up
    # ten minutes after the first restart it has left the window: one restart is free again
    assert p.decide(10 * MINUTE_MS).restart == 3


def test_no_restart_at_all_when_the_supervisor_is_off_or_has_no_budget():
    assert policy(enabled=False).decide(0).give_up
    assert policy(max_restarts=0).decide(0).give_up


def test_the_report_names_the_budget_and_each_failure_in_the_window():
    p = policy(max_restarts=1, window="10m")
    failures = [
        QueryFailure(0, "IOException", "No space left on device", batch=4),
        QueryFailure(MINUTE_MS, "IOException", "No space left on device", batch=4, file="/s/x"),
    ]
    report = p.report(failures, 2 * MINUTE_MS)
    assert "gave up after 1 restart(s) within 0:10:00" in report
    assert "  2. batch 4 failed with IOException, file '/s/x': No space left on device" in report


def test_a_failure_is_described_by_the_innermost_cause_spark_names():
    message = (
        "pipeline 'p' failed: FileNotFoundException: File file:/land/events-7.jsonl does not "
        "exist; the full trace is in the Spark log."
    )
    assert error_class_of(message, "PipelineError") == "FileNotFoundException"
    assert file_named_in(message) == "/land/events-7.jsonl"
    assert error_class_of("pipeline 'p' failed", "PipelineError") == "PipelineError"


def test_a_url_in_a_message_is_not_taken_for_a_file():
    message = (
        "pipeline 'p' failed: ConcurrentAppendException: Files were added to the root of the "
        "table by a concurrent update. Please try the operation again. Refer to "
        "https://docs.delta.io/latest/concurrency-control.html for more details."
    )
    assert file_named_in(message) is None
    both = message + " (while writing file:/out/sessions/part-0001.parquet)"
    assert file_named_in(both) == "/out/sessions/part-0001.parquet"


def test_backoffs_out_of_order_are_a_config_error():
    with pytest.raises(ValueError, match="initial_backoff"):
        SupervisorConfig.model_validate({"initial_backoff": "5m", "max_backoff": "1m"})


def test_defaults_restart_a_few_times_within_half_an_hour():
    config = SupervisorConfig()
    assert config.enabled and config.max_restarts == 5 and config.window == timedelta(minutes=30)
