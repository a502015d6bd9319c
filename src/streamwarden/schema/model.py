"""``[schema]``: the user's records, declared once and used from source to sink.

``key`` names the field whose value keys all state, ``time`` the event time (a TIMESTAMP field:
ISO-8601 / RFC 3339 text with a zone; a BIGINT or INT field: epoch time in ``time_unit``),
``fields`` the record's fields in Spark DDL. Fields not declared are ignored; a dotted name
(``geo.city``) reaches into a struct wherever a field is named. ``required`` fields (and always
the key and the time) must be present and non-null; ``checks`` bound a field's values and
``rules`` are record-level Spark SQL conditions, false or null rejecting the record. Nothing is
coerced: a value of another JSON type than declared is ``wrong_type``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Literal

from pydantic import Field, model_validator
from pyspark.sql import types as T

from streamwarden.schema.ddl import DdlError, ddl_of, parse_fields
from streamwarden.settings.types import Strict

__all__ = [
    "INTEGRAL",
    "NUMERIC",
    "RESERVED_PREFIX",
    "FieldChecks",
    "Rule",
    "Schema",
    "field_type",
]

#: What the columns streamwarden adds beside the user's fields start with; no field may.
RESERVED_PREFIX = "_sw_"
INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
NUMERIC = (*INTEGRAL, T.FloatType, T.DoubleType, T.DecimalType)
_RULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,99}$")


class FieldChecks(Strict):
    """``[schema.checks.<field>]``: bounds on one field's values (a null value passes; make
    the field required to refuse it). ``min``/``max`` for numbers (``out_of_range``),
    ``allowed`` for any scalar (``not_allowed``), ``max_length`` in characters and ``pattern``
    (a regular expression the whole value must match) for text (``too_long``,
    ``pattern_mismatch``)."""

    min: int | float | None = None
    max: int | float | None = None
    allowed: list[str] | list[int] | list[float] | list[bool] | None = Field(
        default=None, min_length=1
    )
    max_length: int | None = Field(default=None, ge=0)
    pattern: str | None = Field(default=None, min_length=1)


class Rule(Strict):
    """``[[schema.rules]]``: a record-level check in Spark SQL over the fields; a record for
    which it is false or null is ``rule_failed``, its detail naming the rule."""

    name: str
    check: str = Field(min_length=1)


def field_type(struct: T.StructType, path: str) -> T.DataType | None:
    """The type of the field a dotted ``path`` names in ``struct`` (into structs only), or
    None when there is none. Names match as Spark resolves them: without regard to case."""
    current: T.DataType = struct
    for part in path.split("."):
        if not isinstance(current, T.StructType):
            return None
        match = [f for f in current.fields if f.name.lower() == part.lower()]
        if not match:
            return None
        current = match[0].dataType
    return current


class Schema(Strict):
    """The records' schema (see the module's description); the Python API takes it as is:
    ``Schema(key="account", time="at", fields="account STRING, at TIMESTAMP, amount DOUBLE")``.
    """

    key: str = Field(min_length=1)
    time: str = Field(min_length=1)
    time_unit: Literal["s", "ms", "us"] = "ms"
    fields: str = Field(min_length=1)
    required: list[str] = Field(default_factory=list)
    checks: dict[str, FieldChecks] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)

    @cached_property
    def struct(self) -> T.StructType:
        """The declared fields as a Spark struct."""
        return parse_fields(self.fields)

    def type_of(self, path: str) -> T.DataType | None:
        """The declared type of the field ``path`` names (dotted into structs), or None."""
        return field_type(self.struct, path)

    @property
    def key_type(self) -> T.DataType:
        key = self.type_of(self.key)
        assert key is not None  # checked at load
        return key

    @property
    def time_type(self) -> T.DataType:
        time = self.type_of(self.time)
        assert time is not None  # checked at load
        return time

    @property
    def key_name(self) -> str:
        """The key's output column name: its field's own name (the last part of a dotted
        one)."""
        return self.key.rsplit(".", 1)[-1]

    @property
    def required_fields(self) -> list[str]:
        """Every field that must be present: the key, the time, then ``required``."""
        return list(dict.fromkeys([self.key, self.time, *self.required]))

    @model_validator(mode="after")
    def _consistent(self) -> Schema:
        try:
            struct = parse_fields(self.fields)
        except DdlError as exc:
            raise ValueError(f"schema.fields: {exc}") from None
        for f in struct.fields:
            if f.name.lower().startswith(RESERVED_PREFIX):
                raise ValueError(
                    f"schema.fields: {f.name!r} starts with {RESERVED_PREFIX!r}, which "
                    "streamwarden reserves for the columns it adds; rename the field"
                )
        self._check_key(struct)
        self._check_time(struct)
        for path in self.required:
            self._declared(struct, path, "schema.required")
        for path, checks in self.checks.items():
            _check_fits(path, self._declared(struct, path, "schema.checks"), checks)
        names = [r.name for r in self.rules]
        for name in names:
            if not _RULE_NAME.match(name):
                raise ValueError(
                    f"schema.rules: name {name!r} must be a short word (letters, digits, _ and "
                    "-), as dead letters' details show it"
                )
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"schema.rules: name {duplicates[0]!r} is given twice")
        return self

    def _declared(self, struct: T.StructType, path: str, setting: str) -> T.DataType:
        found = field_type(struct, path)
        if found is None:
            declared = ", ".join(f.name for f in struct.fields)
            raise ValueError(
                f"{setting}: {path!r} is not a declared field (schema.fields declares "
                f"{declared}; a dotted name reaches into a STRUCT)"
            )
        return found

    def _check_key(self, struct: T.StructType) -> None:
        key = self._declared(struct, self.key, "schema.key")
        if not isinstance(key, (T.StringType, *INTEGRAL)):
            raise ValueError(
                f"schema.key: {self.key!r} is {ddl_of(key)}; a key is a STRING or an integer "
                "(TINYINT, SMALLINT, INT, BIGINT) field"
            )

    def _check_time(self, struct: T.StructType) -> None:
        time = self._declared(struct, self.time, "schema.time")
        if not isinstance(time, T.TimestampType | T.LongType | T.IntegerType):
            raise ValueError(
                f"schema.time: {self.time!r} is {ddl_of(time)}; an event time is a TIMESTAMP "
                "field (ISO-8601 text with a zone, e.g. 2026-01-01T12:00:00Z) or a BIGINT or "
                "INT field of epoch time in schema.time_unit (s, ms or us)"
            )


def _check_fits(path: str, data_type: T.DataType, checks: FieldChecks) -> None:
    """Each check given for ``path`` applies to its type."""
    where = f"schema.checks.{path}"
    shown = ddl_of(data_type)
    numeric = isinstance(data_type, NUMERIC)
    text = isinstance(data_type, T.StringType)
    if (checks.min is not None or checks.max is not None) and not numeric:
        raise ValueError(f"{where}: min and max bound numbers, but {path!r} is {shown}")
    if checks.min is not None and checks.max is not None and checks.min > checks.max:
        raise ValueError(f"{where}: min {checks.min} is over max {checks.max}")
    if (checks.max_length is not None or checks.pattern is not None) and not text:
        raise ValueError(f"{where}: max_length and pattern check text, but {path!r} is {shown}")
    if checks.pattern is not None:
        try:
            re.compile(checks.pattern)
        except re.error as exc:
            raise ValueError(
                f"{where}: pattern {checks.pattern!r} is not a regular expression: {exc}"
            ) from None
    if checks.allowed is not None:
        _check_allowed(where, path, data_type, checks.allowed)


def _check_allowed(where: str, path: str, data_type: T.DataType, allowed: Sequence[object]) -> None:
    expected: tuple[type, ...]
    if isinstance(data_type, T.StringType):
        expected = (str,)
    elif isinstance(data_type, T.BooleanType):
        expected = (bool,)
    elif isinstance(data_type, INTEGRAL):
        expected = (int,)
    elif isinstance(data_type, NUMERIC):
        expected = (int, float)
    else:
        raise ValueError(f"{where}: allowed lists values, but {path!r} is {ddl_of(data_type)}")
    wrong = [
        v
        for v in allowed
        if not isinstance(v, expected) or (isinstance(v, bool) and bool not in expected)
    ]
    if wrong:
        raise ValueError(f"{where}: allowed value {wrong[0]!r} is not a {ddl_of(data_type)} value")
