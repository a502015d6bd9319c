"""A reference of what validation refuses in a record, in plain Python, for the example data
sets: every fault a record has under an example config's ``[schema]`` and ``[validation]``
(not only the first, as validation reports), so that a test can say each hostile record has
exactly one and each valid record none. The rules, Spark SQL in the configs, are given as
Python predicates by the tests."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import types as T

from streamwarden.schema import Schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_EARLIEST_MS = int(datetime(2000, 1, 1, tzinfo=UTC).timestamp() * 1000)

Rule = Callable[[dict[str, Any]], bool]


def example(name: str) -> dict[str, Any]:
    """The raw TOML of ``examples/<name>.toml``."""
    return tomllib.loads((EXAMPLES / f"{name}.toml").read_text(encoding="utf-8"))


class Reference:
    """The faults of a record under an example config."""

    def __init__(self, config: Mapping[str, Any], rules: Mapping[str, Rule] | None = None):
        self.schema = Schema(**config["schema"])
        validation = config.get("validation", {})
        self.max_key_length = validation.get("max_key_length", 256)
        self.max_bytes = 64 * 1024
        self.rules = rules or {}
        assert set(self.rules) == {r.name for r in self.schema.rules}, "a rule without a predicate"

    def faults(self, data: bytes, now: datetime | None = None) -> set[str]:
        found = set()
        if len(data) > self.max_bytes:
            found.add("record_too_large")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return found | {"invalid_utf8"}
        try:
            record = json.loads(text)
        except ValueError:
            return found | {"malformed_json"}
        found |= self._types(record)
        if found & {"missing_field", "wrong_type", "invalid_timestamp"}:
            return found
        found |= self._key_and_time(record, now or datetime.now(UTC))
        found |= self._checks(record)
        if not all(rule(record) for rule in self.rules.values()):
            found.add("rule_failed")
        return found

    def _types(self, record: dict[str, Any]) -> set[str]:
        found = set()
        for path in self.schema.required_fields:
            if _value(record, path) is None:
                found.add("missing_field")
        for f in self.schema.struct.fields:
            found |= _type_faults(record.get(f.name), f.dataType)
        return found

    def _key_and_time(self, record: dict[str, Any], now: datetime) -> set[str]:
        found = set()
        key = str(_value(record, self.schema.key))
        if not key.strip() or "\u0000" in key or len(key) > self.max_key_length:
            found.add("invalid_key")
        ms = _time_ms(_value(record, self.schema.time), self.schema)
        if ms < _EARLIEST_MS:
            found.add("invalid_timestamp")
        elif ms > (now + timedelta(hours=1)).timestamp() * 1000:
            found.add("timestamp_in_future")
        return found

    def _checks(self, record: dict[str, Any]) -> set[str]:
        found = set()
        for path, checks in self.schema.checks.items():
            value = _value(record, path)
            if value is None:
                continue
            if (checks.min is not None and value < checks.min) or (
                checks.max is not None and value > checks.max
            ):
                found.add("out_of_range")
            if checks.allowed is not None and value not in checks.allowed:
                found.add("not_allowed")
            if checks.max_length is not None and len(value) > checks.max_length:
                found.add("too_long")
            if checks.pattern is not None and not re.fullmatch(checks.pattern, value):
                found.add("pattern_mismatch")
        return found


def _value(record: dict[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _type_faults(value: Any, data_type: T.DataType) -> set[str]:
    if value is None:
        return set()
    if isinstance(data_type, T.StringType):
        return set() if isinstance(value, str) else {"wrong_type"}
    if isinstance(data_type, (T.IntegerType, T.LongType)):
        return set() if isinstance(value, int) and not isinstance(value, bool) else {"wrong_type"}
    if isinstance(data_type, T.DoubleType):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return set() if ok else {"wrong_type"}
    if isinstance(data_type, T.TimestampType):
        if not isinstance(value, str):
            return {"wrong_type"}
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return {"invalid_timestamp"}
        return set() if parsed.tzinfo is not None else {"invalid_timestamp"}
    if isinstance(data_type, T.StructType):
        if not isinstance(value, dict):
            return {"wrong_type"}
        return set().union(*(_type_faults(value.get(f.name), f.dataType) for f in data_type.fields))
    raise AssertionError(f"no reference for {data_type}")


def _time_ms(value: Any, schema: Schema) -> int:
    if isinstance(value, str):
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    per_ms = {"s": 0.001, "ms": 1, "us": 1000}[schema.time_unit]
    return int(value / per_ms)
