"""Spark DDL for a record's fields (``account STRING, at TIMESTAMP, geo STRUCT<city: STRING>``),
read without Spark: what a PySpark user already writes, checked when the config loads.

The types a record's field may have are the ones JSON carries without guessing: STRING,
BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), TIMESTAMP (an instant:
text with a zone), DATE, and ARRAY, MAP (with STRING keys) and STRUCT of them. A name may be
quoted with backticks. ``NOT NULL`` is refused with the setting that says it (``required``), and
TIMESTAMP_NTZ because a time without a zone is not an instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import types as T

__all__ = ["DdlError", "ddl_of", "parse_fields"]


class DdlError(ValueError):
    """A DDL text that does not declare fields, with where and why."""


_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(.))", re.S)

_SIMPLE: dict[str, T.DataType] = {
    "STRING": T.StringType(),
    "VARCHAR": T.StringType(),
    "CHAR": T.StringType(),
    "BOOLEAN": T.BooleanType(),
    "BOOL": T.BooleanType(),
    "TINYINT": T.ByteType(),
    "BYTE": T.ByteType(),
    "SMALLINT": T.ShortType(),
    "SHORT": T.ShortType(),
    "INT": T.IntegerType(),
    "INTEGER": T.IntegerType(),
    "BIGINT": T.LongType(),
    "LONG": T.LongType(),
    "FLOAT": T.FloatType(),
    "REAL": T.FloatType(),
    "DOUBLE": T.DoubleType(),
    "TIMESTAMP": T.TimestampType(),
    "TIMESTAMP_LTZ": T.TimestampType(),
    "DATE": T.DateType(),
}
_REFUSED = {
    "TIMESTAMP_NTZ": "a TIMESTAMP_NTZ has no zone, so its instant is unknown; declare TIMESTAMP "
    "(text with a zone) or BIGINT (epoch time, in schema.time_unit)",
    "BINARY": "JSON has no bytes; declare STRING (e.g. base64 text)",
    "INTERVAL": "JSON has no intervals; declare a number of a unit, e.g. BIGINT",
    "VARIANT": "declare the field's structure (STRUCT, ARRAY, MAP)",
}


@dataclass
class _Tokens:
    text: str
    items: list[tuple[str, str, int]]  # (kind, value, position)
    at: int = 0

    @classmethod
    def of(cls, text: str) -> _Tokens:
        items: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                break
            pos = m.end()
            quoted, word, number, other = m.groups()
            if quoted is not None:
                items.append(("name", quoted[1:-1].replace("``", "`"), m.start(1)))
            elif word is not None:
                items.append(("word", word, m.start(2)))
            elif number is not None:
                items.append(("number", number, m.start(3)))
            elif other is not None and not other.isspace():
                items.append(("sym", other, m.start(4)))
        return cls(text, items)

    def peek(self) -> tuple[str, str, int] | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self) -> tuple[str, str, int]:
        item = self.peek()
        if item is None:
            raise self.error("the text ends where more was expected")
        self.at += 1
        return item

    def take_symbol(self, symbol: str) -> bool:
        item = self.peek()
        if item is not None and item[0] == "sym" and item[1] == symbol:
            self.at += 1
            return True
        return False

    def expect(self, symbol: str) -> None:
        if not self.take_symbol(symbol):
            item = self.peek()
            got = "the end" if item is None else repr(item[1])
            raise self.error(f"expected {symbol!r}, got {got}")

    def error(self, why: str) -> DdlError:
        item = self.peek()
        where = len(self.text) if item is None else item[2]
        return DdlError(f"{why} (at character {where + 1} of {self.text!r})")


def parse_fields(ddl: str) -> T.StructType:
    """The fields ``ddl`` declares, as a Spark struct; raises :class:`DdlError` saying where
    and what is wrong."""
    tokens = _Tokens.of(ddl)
    if tokens.peek() is None:
        raise DdlError(
            "no field is declared: write fields as Spark DDL, e.g. 'id STRING, at "
            "TIMESTAMP, amount DOUBLE'"
        )
    struct = _fields(tokens, closing=None)
    if tokens.peek() is not None:
        raise tokens.error(f"unexpected {tokens.peek()[1]!r}")  # type: ignore[index]
    return struct


def _fields(tokens: _Tokens, closing: str | None) -> T.StructType:
    fields: list[T.StructField] = []
    seen: set[str] = set()
    while True:
        if closing is not None and tokens.take_symbol(closing):
            if not fields:
                raise tokens.error("a STRUCT needs at least one field")
            break
        kind, name, _ = tokens.take()
        if kind not in ("word", "name"):
            raise tokens.error(f"expected a field name, got {name!r}")
        tokens.take_symbol(":")
        if name.lower() in seen:
            raise tokens.error(f"field {name!r} is declared twice")
        seen.add(name.lower())
        data_type = _type(tokens)
        _no_constraints(tokens, name)
        fields.append(T.StructField(name, data_type, nullable=True))
        if tokens.take_symbol(","):
            continue
        if closing is None:
            break
        tokens.expect(closing)
        break
    return T.StructType(fields)


def _no_constraints(tokens: _Tokens, name: str) -> None:
    item = tokens.peek()
    if item is None or item[0] != "word":
        return
    word = item[1].upper()
    if word == "NOT":
        raise tokens.error(
            f"field {name!r}: NOT NULL is not written in the DDL; list the field in schema.required"
        )
    if word == "COMMENT":
        raise tokens.error(f"field {name!r}: comments are not read here; remove COMMENT '...'")


def _type(tokens: _Tokens) -> T.DataType:
    kind, word, _ = tokens.take()
    if kind != "word":
        raise tokens.error(f"expected a type, got {word!r}")
    name = word.upper()
    if name in _REFUSED:
        tokens.at -= 1
        raise tokens.error(f"{name} is not a field type here: {_REFUSED[name]}")
    if name in ("VARCHAR", "CHAR") and tokens.take_symbol("("):
        tokens.take()
        tokens.expect(")")
    if name in _SIMPLE:
        return _SIMPLE[name]
    if name in ("DECIMAL", "DEC", "NUMERIC"):
        precision, scale = 10, 0
        if tokens.take_symbol("("):
            precision = int(_number(tokens))
            if tokens.take_symbol(","):
                scale = int(_number(tokens))
            tokens.expect(")")
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise tokens.error(
                f"DECIMAL({precision}, {scale}) needs 1 <= precision <= 38 and "
                "0 <= scale <= precision"
            )
        return T.DecimalType(precision, scale)
    if name == "ARRAY":
        tokens.expect("<")
        element = _type(tokens)
        tokens.expect(">")
        return T.ArrayType(element, containsNull=True)
    if name == "MAP":
        tokens.expect("<")
        key = _type(tokens)
        if not isinstance(key, T.StringType):
            raise tokens.error("a MAP's keys are JSON object names: declare MAP<STRING, ...>")
        tokens.expect(",")
        value = _type(tokens)
        tokens.expect(">")
        return T.MapType(key, value, valueContainsNull=True)
    if name == "STRUCT":
        tokens.expect("<")
        return _fields(tokens, closing=">")
    tokens.at -= 1
    raise tokens.error(
        f"unknown type {word!r}; use STRING, BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s), "
        "TIMESTAMP, DATE, ARRAY<...>, MAP<STRING, ...> or STRUCT<...>"
    )


def _number(tokens: _Tokens) -> str:
    kind, value, _ = tokens.take()
    if kind != "number":
        raise tokens.error(f"expected a number, got {value!r}")
    return value


def ddl_of(data_type: T.DataType) -> str:
    """``data_type`` as DDL writes it, for messages and docs: ``STRUCT<city: STRING>``."""
    if isinstance(data_type, T.StructType):
        inner = ", ".join(f"{_name(f.name)}: {ddl_of(f.dataType)}" for f in data_type.fields)
        return f"STRUCT<{inner}>"
    if isinstance(data_type, T.ArrayType):
        return f"ARRAY<{ddl_of(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"MAP<{ddl_of(data_type.keyType)}, {ddl_of(data_type.valueType)}>"
    if isinstance(data_type, T.DecimalType):
        return f"DECIMAL({data_type.precision},{data_type.scale})"
    names: dict[type[T.DataType], str] = {
        T.ByteType: "TINYINT",
        T.ShortType: "SMALLINT",
        T.IntegerType: "INT",
        T.LongType: "BIGINT",
    }
    return names.get(type(data_type), data_type.simpleString().upper())


def _name(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f"`{name}`"
