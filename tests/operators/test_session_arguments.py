"""Wrong arguments to the session API are refused with the parameter, the value given and what
to pass instead; never a TypeError or AttributeError from inside."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from streamwarden.errors import ConfigError
from streamwarden.operators.sessions import SessionParams


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"gap": 30},
            "gap must be a datetime.timedelta such as timedelta(minutes=30), got 30 (int)",
        ),
        (
            {"gap": "30m"},
            "gap must be a datetime.timedelta such as timedelta(minutes=30), got '30m' (str); "
            "to read a config string such as '30m', use "
            "streamwarden.config.units.parse_duration('30m')",
        ),
        ({"allowed_lateness": None}, "allowed_lateness must be a datetime.timedelta"),
        ({"max_out_of_orderness": 60.0}, "max_out_of_orderness must be a datetime.timedelta"),
        (
            {"slow_key_threshold": 1},
            "slow_key_threshold must be a datetime.timedelta such as timedelta(seconds=1) or "
            "None, got 1 (int)",
        ),
        ({"max_pages": "5"}, "max_pages must be an int such as 300, got '5' (str)"),
        ({"max_pages": True}, "max_pages must be an int such as 300, got True (bool)"),
        ({"max_session_bytes": 4e6}, "max_session_bytes must be an int"),
        ({"collect_urls": "no"}, "collect_urls must be True or False, got 'no' (str)"),
    ],
    ids=lambda v: str(v) if isinstance(v, dict) else "",
)
def test_session_params_of_the_wrong_type_are_refused_naming_the_parameter_and_the_fix(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SessionParams(**arguments)
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"gap": timedelta(0)}, "gap must be > 0, got datetime.timedelta(0)"),
        (
            {"allowed_lateness": timedelta(seconds=-1)},
            "allowed_lateness must be >= 0, got datetime.timedelta(days=-1, seconds=86399)",
        ),
        ({"max_pages": 0}, "max_pages must be >= 1, got 0"),
        ({"max_session_bytes": -5}, "max_session_bytes must be >= 1, got -5"),
    ],
)
def test_session_params_out_of_range_are_refused_naming_the_parameter_and_the_value(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SessionParams(**arguments)
    assert str(caught.value).startswith(expected)


def test_session_params_of_the_right_types_are_accepted_including_no_slow_key_threshold() -> None:
    params = SessionParams(gap=timedelta(minutes=5), max_pages=10, slow_key_threshold=None)
    assert (params.gap, params.max_pages, params.slow_key_threshold_ms) == (
        timedelta(minutes=5),
        10,
        0,
    )
