"""Fields in Spark DDL, read without Spark: what a PySpark user writes, refused with where and
why when it does not declare fields."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from streamwarden.schema import DdlError, ddl_of, parse_fields


def test_the_fields_a_payments_team_declares_are_read_with_their_types() -> None:
    struct = parse_fields(
        "account STRING, at TIMESTAMP, amount DOUBLE, currency STRING, merchant STRING, "
        "country STRING, geo STRUCT<city: STRING>"
    )
    assert [f.name for f in struct.fields] == [
        "account",
        "at",
        "amount",
        "currency",
        "merchant",
        "country",
        "geo",
    ]
    assert struct["at"].dataType == T.TimestampType()
    assert struct["geo"].dataType == T.StructType([T.StructField("city", T.StringType())])


def test_every_json_type_is_read_case_insensitively_with_spark_s_aliases() -> None:
    struct = parse_fields(
        "a tinyint, b SMALLINT, c Int, d integer, e bigint, f LONG, g float, h double, "
        "i decimal(10, 2), j boolean, k date, l array<string>, m map<string, array<int>>, "
        "`odd name` string, n varchar(10)"
    )
    assert [f.dataType for f in struct.fields] == [
        T.ByteType(),
        T.ShortType(),
        T.IntegerType(),
        T.IntegerType(),
        T.LongType(),
        T.LongType(),
        T.FloatType(),
        T.DoubleType(),
        T.DecimalType(10, 2),
        T.BooleanType(),
        T.DateType(),
        T.ArrayType(T.StringType()),
        T.MapType(T.StringType(), T.ArrayType(T.IntegerType())),
        T.StringType(),
        T.StringType(),
    ]
    assert struct.fields[13].name == "odd name"


def test_types_read_back_as_ddl_for_messages() -> None:
    struct = parse_fields("a bigint, b struct<c: array<int>, d: map<string, double>>")
    assert ddl_of(struct) == "STRUCT<a: BIGINT, b: STRUCT<c: ARRAY<INT>, d: MAP<STRING, DOUBLE>>>"


@pytest.mark.parametrize(
    ("ddl", "says"),
    [
        ("", "no field is declared"),
        ("a FOO", "unknown type 'FOO'"),
        ("a STRING NOT NULL", "list the field in schema.required"),
        ("a STRING, A INT", "declared twice"),
        ("a TIMESTAMP_NTZ", "has no zone"),
        ("a MAP<INT, STRING>", "MAP<STRING, ...>"),
        ("a ARRAY<STRING", "expected '>'"),
        ("a STRUCT<>", "at least one field"),
        ("a BINARY", "JSON has no bytes"),
        ("a DECIMAL(50, 2)", "precision <= 38"),
        ("a STRING b INT", "unexpected 'b'"),
    ],
)
def test_a_text_that_does_not_declare_fields_is_refused_saying_where_and_why(
    ddl: str, says: str
) -> None:
    with pytest.raises(DdlError) as caught:
        parse_fields(ddl)
    assert says in str(caught.value)
