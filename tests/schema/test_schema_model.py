"""``[schema]``: the records' key, event time, fields, required fields, checks and rules,
checked when the config loads, each mistake named with what would work."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from pyspark.sql import types as T

from streamwarden.schema import Schema

PAYMENTS = (
    "account STRING, at TIMESTAMP, amount DOUBLE, currency STRING, country STRING, "
    "geo STRUCT<city: STRING>, n BIGINT"
)


def schema(**settings: Any) -> Schema:
    return Schema(**{"key": "account", "time": "at", "fields": PAYMENTS, **settings})


def refusal(**settings: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        schema(**settings)
    return str(caught.value)


def test_a_dotted_name_reaches_into_a_struct_wherever_a_field_is_named() -> None:
    declared = schema(required=["geo.city"], checks={"geo.city": {"max_length": 40}})
    assert declared.type_of("geo.city") == T.StringType()
    assert declared.required_fields == ["account", "at", "geo.city"]


def test_the_key_and_the_time_are_always_required_and_come_first() -> None:
    assert schema(required=["amount", "at"]).required_fields == ["account", "at", "amount"]


def test_a_time_field_must_be_a_timestamp_or_an_integer_epoch() -> None:
    assert "an event time is a TIMESTAMP" in refusal(time="amount")
    assert schema(time="n", time_unit="s").time_type == T.LongType()


def test_a_key_must_be_text_or_an_integer() -> None:
    assert "a key is a STRING or an integer" in refusal(key="geo")
    assert "a key is a STRING or an integer" in refusal(key="amount")


def test_a_name_that_is_not_declared_is_refused_with_the_declared_ones() -> None:
    message = refusal(required=["amuont"])
    assert "schema.required: 'amuont' is not a declared field" in message
    assert "account, at, amount" in message


def test_each_check_must_fit_its_field_s_type() -> None:
    assert "min and max bound numbers, but 'country' is STRING" in refusal(
        checks={"country": {"min": 1}}
    )
    assert "max_length and pattern check text" in refusal(checks={"amount": {"max_length": 3}})
    assert "allowed value 'x' is not a DOUBLE value" in refusal(
        checks={"amount": {"allowed": ["x"]}}
    )
    assert "is not a regular expression" in refusal(checks={"country": {"pattern": "("}})
    assert "min 5 is over max 1" in refusal(checks={"amount": {"min": 5, "max": 1}})


def test_rules_have_unique_short_names() -> None:
    rule = {"name": "big", "check": "amount < 10"}
    assert "'big' is given twice" in refusal(rules=[rule, rule])
    assert "must be a short word" in refusal(rules=[{"name": "a b", "check": "true"}])


def test_fields_may_not_take_the_names_streamwarden_adds() -> None:
    assert "reserves" in refusal(fields=PAYMENTS + ", _sw_raw STRING")


def test_unknown_settings_are_refused() -> None:
    assert "Extra inputs are not permitted" in refusal(key_field="account")
