"""The [monitoring] section: documented defaults, validated values, frozen, unknown keys refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from streamwarden.config import MonitoringConfig, load_config
from streamwarden.errors import ConfigError
from tests.config.test_loader import MINIMAL, write


def test_monitoring_is_on_by_default_on_localhost_with_a_free_port(tmp_path):
    monitoring = load_config(write(tmp_path, MINIMAL)).monitoring
    assert monitoring.enabled and monitoring.progress_log
    assert (monitoring.prometheus_host, monitoring.prometheus_port) == ("127.0.0.1", 0)
    assert monitoring.alarm_window == 8 and monitoring.skew_factor == 2.0
    assert monitoring.slow_batch_threshold == timedelta(seconds=30)


def test_the_section_is_read_from_the_file(tmp_path):
    text = MINIMAL + (
        '[monitoring]\nprometheus_port = 9464\nslow_batch_threshold = "5s"\nskew_factor = 1.5\n'
    )
    monitoring = load_config(write(tmp_path, text)).monitoring
    assert monitoring.prometheus_port == 9464 and monitoring.skew_factor == 1.5
    assert monitoring.slow_batch_threshold == timedelta(seconds=5)


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("prometheus_port = 70000", "monitoring.prometheus_port"),
        ("skew_factor = 1.0", "monitoring.skew_factor"),
        ("alarm_window = 2", "monitoring.alarm_window"),
        ('slow_batch_threshold = "-1s"', "slow_batch_threshold"),
        ("promethues_port = 1", "monitoring.promethues_port"),
    ],
)
def test_bad_values_and_unknown_keys_fail_naming_the_setting(tmp_path, line, named):
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load_config(write(tmp_path, MINIMAL + f"[monitoring]\n{line}\n"))


def test_the_model_is_frozen():
    with pytest.raises(ValidationError):
        MonitoringConfig().skew_factor = 3.0  # type: ignore[misc]
