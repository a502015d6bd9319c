"""Declared session aggregates: parsed, typed from their field, refused with what would work;
and the plan the engine evaluates (each input field once)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from streamwarden.operators.sessions.aggregates import (
    AggregateError,
    engine_plan,
    parse_aggregates,
)
from streamwarden.schema import parse_fields

FIELDS = parse_fields(
    "account STRING, at TIMESTAMP, amount DOUBLE, n INT, merchant STRING, ok BOOLEAN, "
    "day DATE, geo STRUCT<city: STRING>, tags ARRAY<STRING>, price DECIMAL(10,2)"
)


def types(**declared: str) -> dict[str, T.DataType]:
    return {a.name: a.output_type() for a in parse_aggregates(declared, FIELDS)}


def test_each_aggregate_is_typed_from_its_field() -> None:
    assert types(
        events="count()",
        amounts="count(amount)",
        total="sum(amount)",
        n_total="sum(n)",
        mean="avg(n)",
        largest="max(amount)",
        first_at="first(at)",
        last_day="last(day)",
        merchants="count_distinct(merchant)",
        cities="collect_list(geo.city)",
        flags="collect_set(ok)",
    ) == {
        "events": T.LongType(),
        "amounts": T.LongType(),
        "total": T.DoubleType(),
        "n_total": T.LongType(),
        "mean": T.DoubleType(),
        "largest": T.DoubleType(),
        "first_at": T.TimestampType(),
        "last_day": T.DateType(),
        "merchants": T.LongType(),
        "cities": T.ArrayType(T.StringType(), containsNull=False),
        "flags": T.ArrayType(T.BooleanType(), containsNull=False),
    }


@pytest.mark.parametrize(
    ("declared", "says"),
    [
        ({"x": "total(amount)"}, "unknown function 'total'"),
        ({"x": "sum(amuont)"}, "'amuont' is not a declared field"),
        ({"x": "sum(merchant)"}, "sum adds numbers, but 'merchant' is STRING"),
        ({"x": "max(geo)"}, "'geo' is STRUCT<city: STRING>"),
        ({"x": "first(price)"}, "DECIMAL"),
        ({"x": "sum()"}, "sum needs a field"),
        ({"x": "amount"}, "write function(field)"),
        ({"session_id": "count()"}, "already has a column 'session_id'"),
        ({"account": "count()"}, "already has a column 'account'"),
        ({"a b": "count()"}, "a word of letters"),
    ],
)
def test_an_aggregate_that_cannot_be_computed_is_refused_saying_why(
    declared: dict[str, str], says: str
) -> None:
    with pytest.raises(AggregateError) as caught:
        parse_aggregates(declared, FIELDS, taken=("account",))
    assert says in str(caught.value)


def test_count_of_any_field_counts_its_non_null_values() -> None:
    assert types(with_tags="count(tags)") == {"with_tags": T.LongType()}


def test_the_engine_reads_each_input_field_once_in_order_of_first_use() -> None:
    aggregates = parse_aggregates(
        {
            "total": "sum(amount)",
            "events": "count()",
            "largest": "max(amount)",
            "first_at": "first(at)",
        },
        FIELDS,
    )
    assert engine_plan(aggregates) == {
        "inputs": ["double", "long"],
        "aggregates": [
            {"function": "sum", "input": 0},
            {"function": "count"},
            {"function": "max", "input": 0},
            {"function": "first", "input": 1},
        ],
    }
