"""A pipeline reads one source (``[source]`` with ``[schema]``) or several (``[sources.<name>]``
each with its ``[schemas.<name>]``), as its operator reads them; a config mixing the two, or a
source without its schema, is refused at load with one line saying what to write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamwarden.config import parse_config
from streamwarden.errors import ConfigError
from streamwarden.sources.base import SeveralSources, source_of

SCHEMA = {"key": "id", "time": "at", "fields": "id STRING, at BIGINT"}


def join_data(root: Path, **changes: Any) -> dict[str, Any]:
    for name in ("a", "b"):
        (root / name).mkdir(exist_ok=True)
    data: dict[str, Any] = {
        "operator": "join",
        "sources": {"a": {"path": str(root / "a")}, "b": {"path": str(root / "b")}},
        "schemas": {"a": SCHEMA, "b": SCHEMA},
        "join": {"left": "a", "right": "b", "on": [["id", "id"]], "between": ["-5m", "1h"]},
        "sinks": {"joined": {"path": str(root / "j")}, "dead_letters": {"path": str(root / "d")}},
        "checkpoint": {"path": str(root / "ck")},
    }
    data.update(changes)
    return data


def test_several_sources_are_read_each_by_its_own_kind_in_the_config_s_order(tmp_path):
    config = parse_config(join_data(tmp_path), origin="test")
    several = config.several
    assert isinstance(several, SeveralSources) and list(several.named) == ["a", "b"]
    assert [s.kind for s in several.named.values()] == ["files", "files"]
    assert source_of(config.source).where(config.source).startswith("a: ")
    assert config.section.between[0].total_seconds() == -300  # a right row 5m before its left


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"schemas": {"a": SCHEMA}}, "[sources.b] needs its records declared in [schemas.b]"),
        ({"schema": SCHEMA}, "remove [schema]"),
        ({"operator": "sessions", "sinks": None}, "reads one source"),
        ({"join": {"left": "a", "right": "c", "on": [["id", "id"]], "between": ["0s", "1h"]}},
         "join.right = 'c' is not one of the sources"),
        ({"join": {"left": "a", "right": "b", "on": [["id", "nope"]], "between": ["0s", "1h"]}},
         "'nope' is not a field of [schemas.b]"),
        ({"join": {"left": "a", "right": "b", "on": [["id", "id"]], "between": ["1h", "0s"]}},
         "join.between: from (1h) is after to (0s)"),
    ],
)  # fmt: skip
def test_a_config_whose_sources_and_schemas_do_not_fit_is_refused_in_one_line(
    tmp_path, changes, message
):
    data = join_data(tmp_path, **changes)
    if data.get("sinks") is None:
        data["sinks"] = {
            "sessions": {"path": str(tmp_path / "s")},
            "dead_letters": {"path": str(tmp_path / "d")},
        }
        del data["join"]
    with pytest.raises(ConfigError) as caught:
        parse_config(data, origin="test")
    assert message in str(caught.value)


def test_an_operator_of_several_sources_refuses_one(tmp_path):
    (tmp_path / "l").mkdir()
    data = join_data(tmp_path)
    data["source"] = {"path": str(tmp_path / "l")}
    data["schema"] = SCHEMA
    del data["sources"], data["schemas"]
    with pytest.raises(ConfigError) as caught:
        parse_config(data, origin="test")
    assert "operator 'join' reads several sources" in str(caught.value)
