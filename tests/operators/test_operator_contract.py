"""Each pipeline operator is one object found by the config's ``operator`` name: its times
come from its own section, and its per-batch stats count the outputs its section declares."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamwarden.config import load_config
from streamwarden.operators import OPERATORS, operator_of
from streamwarden.operators.settings import OperatorSettings
from tests.config.test_loader import MINIMAL, write
from tests.config.test_pattern_config import PATTERN

#: A batch's observed metrics as each operator's step attaches them.
OBSERVED = {
    "sessions": {"streamwarden": {"sessions": 3, "session_events": 7, "dead_too_late": 1}},
    "patterns": {
        "streamwarden": {"matches": 2, "timeouts": 1, "overflowed_partials": None},
        "streamwarden_input": {"events": 9, "rejected": 0},
    },
}


@pytest.fixture
def configs(tmp_path):
    sessions = MINIMAL + '[sessions]\ngap = "10m"\nallowed_lateness = "5m"\nidle_timeout = "off"\n'
    patterns = PATTERN.replace('within = "30m"', 'within = "20m"\nmax_out_of_orderness = "2m"')
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    return {
        "sessions": load_config(write(tmp_path / "s", sessions)),
        "patterns": load_config(write(tmp_path / "p", patterns)),
    }


def test_every_operator_is_registered_with_the_model_of_its_own_section():
    assert OPERATORS.names() == sorted(OBSERVED)
    for _, operator in OPERATORS.items():
        assert issubclass(operator.settings_model, OperatorSettings)


def test_the_times_of_an_operator_come_from_its_own_section(configs):
    sessions, patterns = operator_of(configs["sessions"]), operator_of(configs["patterns"])
    assert sessions.watermark_delay(configs["sessions"]) == timedelta(minutes=1)
    assert sessions.drain_horizon(configs["sessions"]) == timedelta(minutes=16)
    assert sessions.idle_timeout(configs["sessions"]) is None
    assert patterns.watermark_delay(configs["patterns"]) == timedelta(minutes=2)
    assert patterns.drain_horizon(configs["patterns"]) == timedelta(minutes=22)
    assert patterns.idle_timeout(configs["patterns"]) == timedelta(minutes=5)


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
    assert layout["key"] == "user_id" and layout["fields"] == ["url"]
    assert [s["name"] for s in layout["stages"]] == ["scan", "other"]
    assert all("where" not in s for s in layout["stages"])
    assert operator_of(configs["sessions"]).state_identity(configs["sessions"]) == {}


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_outputs_that_hold_nothing_balance_no_input_and_nothing_else(configs, name):
    operator = operator_of(configs[name])
    empty = dict.fromkeys(configs[name].sinks)
    assert operator.account(empty, 0, []).balanced
    unbalanced = operator.account(empty, 3, [])
    assert not unbalanced.balanced and "NOT BALANCED" in unbalanced.describe()
