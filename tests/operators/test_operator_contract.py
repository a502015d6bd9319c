"""Each pipeline operator is one object found by the config's ``operator`` name: it reads the
pipeline only through ``PipelineView`` (its own section and the records' ``[schema]``), its
times come from its own section, its per-batch stats count the outputs its section declares,
and it says what a history store keeps of it."""

from __future__ import annotations

from dataclasses import make_dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from streamwarden.errors import ConfigError
from streamwarden.history.base import StoredAggregate, StoredColumns
from streamwarden.operators import OPERATORS, operator_of
from streamwarden.operators.base import Operator, PipelineView
from streamwarden.operators.settings import OperatorSettings
from tests.support import (
    join_pipeline_config,
    pattern_pipeline_config,
    pipeline_config,
    process_pipeline_config,
    windows_pipeline_config,
)

#: A batch's observed metrics as each operator's step attaches them.
OBSERVED = {
    "sessions": {"streamwarden": {"sessions": 3, "session_events": 7, "dead_too_late": 1}},
    "patterns": {
        "streamwarden": {"matches": 2, "timeouts": 1, "overflowed_partials": None},
        "streamwarden_input": {"events": 9, "rejected": 0},
    },
    "process": {
        "streamwarden": {"output": 4, "dead_processor_error": 2},
        "streamwarden_input": {"events": 6, "rejected": 0},
    },
    "windows": {"streamwarden": {"windows": 5, "window_events": 8, "dead_window_event_cap": 1}},
    "join": {
        "streamwarden": {"joined": 3, "unmatched": 1, "dead_too_late": 1},
        "streamwarden_input": {"left_events": 4, "left_rejected": 0, "right_events": 2},
    },
}
PATTERN = {
    "within": "20m",
    "max_out_of_orderness": "2m",
    "skip": "skip_past_last_event",
    "fields": ["url"],
    "stages": [
        {"name": "scan", "contiguity": "begin", "where": "url LIKE '/scan/%'"},
        {
            "name": "other",
            "where": "url LIKE '/scan/%'",
            "previous": [{"field": "url", "op": "!=", "stage": "scan"}],
        },
    ],
}
PAYMENTS = {
    "key": "account",
    "time": "at",
    "fields": "account STRING, at TIMESTAMP, amount DOUBLE, merchant STRING",
}
#: What the pipeline offers an operator: the properties of ``PipelineView``.
VIEW_PROPERTIES = sorted(
    name for name, value in vars(PipelineView).items() if isinstance(value, property)
)
#: What an operator offers the pipeline: the methods of ``Operator``.
OPERATOR_METHODS = sorted(
    name for name, value in vars(Operator).items() if callable(value) and not name.startswith("_")
)


def sessions_config(root: Path, **sections: Any) -> Any:
    sessions = {"gap": "10m", "allowed_lateness": "5m", "idle_timeout": "off"}
    return pipeline_config(root, sessions={**sessions, **sections.pop("sessions", {})}, **sections)


@pytest.fixture
def configs(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "k").mkdir()
    (tmp_path / "w").mkdir()
    (tmp_path / "j").mkdir()
    return {
        "sessions": sessions_config(tmp_path / "s"),
        "patterns": pattern_pipeline_config(tmp_path / "p", PATTERN),
        "process": process_pipeline_config(tmp_path / "k", process={"idle_timeout": "2m"}),
        "windows": windows_pipeline_config(tmp_path / "w", aggregates={"n": "count()"}),
        "join": join_pipeline_config(tmp_path / "j"),
    }


def view_of(config: Any) -> Any:
    """A stand-in pipeline with the properties of ``PipelineView`` and nothing else."""
    view = make_dataclass("View", VIEW_PROPERTIES, frozen=True)
    values = {}
    for name in VIEW_PROPERTIES:
        try:
            values[name] = getattr(config, name)
        except ConfigError:  # the one [schema] of a pipeline of several sources: it has none
            values[name] = None
    return view(**values)


def test_every_operator_is_registered_with_the_model_of_its_own_section():
    assert OPERATORS.names() == sorted(OBSERVED)
    for _, operator in OPERATORS.items():
        assert issubclass(operator.settings_model, OperatorSettings)


def test_every_operator_offers_each_method_of_the_contract():
    assert "history_columns" in OPERATOR_METHODS
    for name, operator in OPERATORS.items():
        missing = [m for m in OPERATOR_METHODS if not callable(getattr(operator, m, None))]
        assert missing == [], f"operator {name} lacks {missing}"
        assert operator.name == name


def test_the_pipeline_offers_operators_its_schema_not_field_names():
    assert "schema" in VIEW_PROPERTIES and "fields" not in VIEW_PROPERTIES


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_an_operator_reads_its_pipeline_only_through_the_pipeline_view(configs, name):
    config = configs[name]
    operator, view = operator_of(config), view_of(config)
    operator.check(view)
    for method in ("idle_timeout", "watermark_delay", "drain_horizon"):
        assert getattr(operator, method)(view) == getattr(operator, method)(config)
    assert operator.state_identity(view) == operator.state_identity(config)
    assert operator.history_columns(view) == operator.history_columns(config)


def test_the_times_of_an_operator_come_from_its_own_section(configs):
    sessions, patterns = operator_of(configs["sessions"]), operator_of(configs["patterns"])
    assert sessions.watermark_delay(configs["sessions"]) == timedelta(minutes=1)
    assert sessions.drain_horizon(configs["sessions"]) == timedelta(minutes=16)
    assert sessions.idle_timeout(configs["sessions"]) is None
    assert patterns.watermark_delay(configs["patterns"]) == timedelta(minutes=2)
    assert patterns.drain_horizon(configs["patterns"]) == timedelta(minutes=22)
    assert patterns.idle_timeout(configs["patterns"]) == timedelta(minutes=5)
    process = operator_of(configs["process"])
    assert process.watermark_delay(configs["process"]) == timedelta(minutes=1)
    # 30m, the expiry timers' grid step (a sixteenth: 112.5 s) and the watermark delay
    assert process.drain_horizon(configs["process"]) == timedelta(minutes=31, seconds=112.5)
    assert process.idle_timeout(configs["process"]) == timedelta(minutes=2)


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_the_stats_of_a_batch_count_the_outputs_the_section_declares(configs, name):
    operator = operator_of(configs[name])
    stats = operator.stats_from_progress({"batchId": 4, "observedMetrics": OBSERVED[name]})
    assert stats is not None and stats.batch_id == 4
    assert tuple(stats.output_counts()) == OPERATORS[name].settings_model.all_outputs()
    assert operator.stats_from_progress({"batchId": 5}) is None


def test_the_state_identity_of_patterns_is_the_pattern_layout_without_the_conditions(configs):
    config = configs["patterns"]
    layout = operator_of(config).state_identity(config)["pattern"]
    assert layout["key"] == "user_id" and layout["fields"] == ["url"]  # the key: schema.key
    assert [s["name"] for s in layout["stages"]] == ["scan", "other"]
    assert all("where" not in s for s in layout["stages"])
    sessions = configs["sessions"]
    assert operator_of(sessions).state_identity(sessions) == {  # what its state is read under
        "sessions": {"key": "user_id", "aggregates": dict(sessions.section.aggregates)}
    }


def test_a_pattern_carries_every_declared_field_unless_it_names_its_own(tmp_path):
    config = pattern_pipeline_config(tmp_path, {k: v for k, v in PATTERN.items() if k != "fields"})
    layout = operator_of(config).state_identity(config)["pattern"]
    assert layout["fields"] == ["user_id", "ts", "page_number", "url"]


def test_a_sessions_history_keeps_its_key_column_its_state_and_its_aggregates_typed(tmp_path):
    config = sessions_config(
        tmp_path,
        schema=PAYMENTS,
        sessions={
            "aggregates": {
                "total": "sum(amount)",
                "merchants": "collect_set(merchant)",
                "latest": "max(at)",
                "payments": "count()",
            }
        },
    )
    assert operator_of(config).history_columns(config) == StoredColumns(
        key_name="account",
        state_name="aggregate_state",
        aggregates=(
            StoredAggregate("total", "double"),
            StoredAggregate("merchants", "array<string>"),
            StoredAggregate("latest", "timestamp"),
            StoredAggregate("payments", "bigint"),
        ),
    )


def test_the_history_of_pageview_sessions_keeps_their_urls_and_patterns_keep_none(configs):
    sessions = configs["sessions"]
    columns = operator_of(sessions).history_columns(sessions)
    assert columns is not None and columns.key_name == "user_id"
    assert columns.fields[-2:] == ("first_url", "last_url")
    assert operator_of(configs["patterns"]).history_columns(configs["patterns"]) is None


def test_a_sessions_config_whose_aggregate_reads_no_declared_field_is_refused_at_load(tmp_path):
    with pytest.raises(ConfigError) as caught:
        sessions_config(tmp_path, sessions={"aggregates": {"total": "sum(amount)"}})
    assert (
        "sessions.aggregate total = 'sum(amount)': 'amount' is not a declared field "
        "(the fields: user_id, ts, page_number, url;"
    ) in str(caught.value)


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_outputs_that_hold_nothing_balance_no_input_and_nothing_else(configs, name):
    operator = operator_of(configs[name])
    empty = dict.fromkeys(configs[name].sinks)
    assert operator.account(configs[name], empty, 0, []).balanced
    unbalanced = operator.account(configs[name], empty, 3, [])
    assert not unbalanced.balanced and "NOT BALANCED" in unbalanced.describe()


def test_the_state_identity_of_a_processor_is_each_state_s_kind_and_types_and_the_key(configs):
    config = configs["process"]
    assert operator_of(config).state_identity(config) == {
        "process": {
            "key": "user_id",
            "states": {"count": {"kind": "value", "schema": "STRUCT<pages: BIGINT>"}},
        }
    }


def test_a_processor_that_cannot_be_imported_is_refused_at_load_naming_the_setting(tmp_path):
    with pytest.raises(ConfigError, match=r"process\.processor 'no_such_module:Alert': module"):
        process_pipeline_config(tmp_path, "no_such_module:Alert")


def test_a_processor_given_without_its_class_is_refused_at_load(tmp_path):
    with pytest.raises(ConfigError, match="give the processor as 'module:Class'"):
        process_pipeline_config(tmp_path, "tests.operators.processors")


def test_doctor_reports_a_processor_state_declared_unbounded(tmp_path):
    from streamwarden.doctor import diagnose

    config = process_pipeline_config(tmp_path, "tests.operators.processors:KeptForever")
    [finding] = [f for f in diagnose(config, connections=False) if f.code == "unbounded-state"]
    assert "state 'count' of KeptForever is declared unbounded=True" in finding.message
    assert not [f for f in diagnose(configs_process(tmp_path)) if f.code == "unbounded-state"]


def configs_process(root: Path) -> Any:
    (root / "bounded").mkdir()
    return process_pipeline_config(root / "bounded")
