"""The docs site's examples are real: every TOML block of docs/ is a valid config (a block that
shows a few sections is checked inside a minimal pipeline of its operator), and every Python
block parses. Nothing here starts Spark."""

from __future__ import annotations

import ast
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from streamwarden.cli.main import build_parser
from streamwarden.config import parse_config
from streamwarden.errors import ConfigError

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)

#: The smallest pipeline of each operator: a block is laid over it, its sections winning.
BASES: dict[str, dict[str, Any]] = {
    "sessions": {
        "source": {"path": "landing"},
        "schema": {"key": "user_id", "time": "ts", "fields": "user_id STRING, ts BIGINT"},
        "sinks": {"sessions": {"path": "out/sessions"}, "dead_letters": {"path": "out/dl"}},
        "checkpoint": {"path": "out/checkpoint"},
    },
    "patterns": {
        "source": {"path": "landing"},
        "schema": {"key": "user_id", "time": "ts", "fields": "user_id STRING, ts BIGINT"},
        "patterns": {
            "within": "10m",
            "stages": [{"name": "a", "contiguity": "begin", "where": "true"}],
        },
        "sinks": {"matches": {"path": "out/matches"}, "dead_letters": {"path": "out/dl"}},
        "checkpoint": {"path": "out/checkpoint"},
    },
    "process": {
        "source": {"path": "landing"},
        "schema": {"key": "user_id", "time": "ts", "fields": "user_id STRING, ts BIGINT"},
        "process": {"processor": "alerts:BigPaymentAlert"},
        "sinks": {"output": {"path": "out/output"}, "dead_letters": {"path": "out/dl"}},
        "checkpoint": {"path": "out/checkpoint"},
    },
    "join": {},
    "windows": {
        "source": {"path": "landing"},
        "schema": {"key": "user_id", "time": "ts", "fields": "user_id STRING, ts BIGINT"},
        "windows": {"size": "1m"},
        "sinks": {"windows": {"path": "out/windows"}, "dead_letters": {"path": "out/dl"}},
        "checkpoint": {"path": "out/checkpoint"},
    },
}


def blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
            if match.group(1) == language:
                line = page.read_text(encoding="utf-8")[: match.start()].count("\n") + 1
                found.append((f"{page.relative_to(DOCS)}:{line}", match.group(2)))
    return found


def laid_over(base: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """``block`` over ``base``: tables merge, except that a table naming its ``kind`` replaces
    the base's (a Kafka source keeps nothing of a files source)."""
    out = dict(base)
    for key, value in block.items():
        mine = out.get(key)
        if isinstance(value, dict) and isinstance(mine, dict) and "kind" not in value:
            out[key] = laid_over(mine, value)
        else:
            out[key] = value
    return out


def test_the_docs_have_config_examples():
    assert len(blocks("toml")) >= 20


def with_the_docs_processor(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``data`` whose ``[process]`` names the processor class the docs define, written as a
    module into ``folder`` under a name of its own (nothing else on the path can answer)."""
    spec = data["process"]["processor"]
    class_name = spec.partition(":")[2]
    [source] = [t for _, t in blocks("python") if f"class {class_name}(" in t]
    module = f"docs_processor_{abs(hash(folder))}"
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    process = {**data["process"], "processor": f"{module}:{class_name}", "python_path": ["."]}
    return {**data, "process": process}


@pytest.mark.parametrize(("where", "text"), blocks("toml"), ids=[w for w, _ in blocks("toml")])
def test_every_config_example_is_a_valid_config(where, text, tmp_path, monkeypatch):
    block = tomllib.loads(text)
    operator = block.get("operator", "sessions")
    data = laid_over(BASES[operator], block)
    if operator == "process":
        monkeypatch.setattr(sys, "path", list(sys.path))  # the loader puts python_path first
        data = with_the_docs_processor(data, tmp_path)
        module = data["process"]["processor"].partition(":")[0]
        monkeypatch.setitem(sys.modules, module, None)  # so that teardown removes it ...
        del sys.modules[module]  # ... and the loader imports it afresh
    if "history" in data and "history_lateness" not in data.get("sessions", {}):
        data["sessions"] = {**data.get("sessions", {}), "history_lateness": "7d"}
    sources = data.get("sources", {"source": data.get("source", {})})
    for source in sources.values():
        if source.get("kind", "files") == "files":
            (tmp_path / source["path"]).mkdir(parents=True, exist_ok=True)
    try:
        parse_config(data, origin=where, base=tmp_path)
    except ConfigError as exc:
        pytest.fail(f"{where}: {exc}")


@pytest.mark.parametrize(("where", "text"), blocks("python"), ids=[w for w, _ in blocks("python")])
def test_every_python_example_parses(where, text):
    ast.parse(text, filename=where)


def test_a_wrong_key_in_an_example_would_fail():
    data = laid_over(BASES["sessions"], {"sessions": {"gapp": "30m"}})
    with pytest.raises(ConfigError, match="gapp"):
        parse_config(data)


def command_lines() -> list[tuple[str, list[str]]]:
    """Every ``streamwarden ...`` command of the docs' shell blocks, as its arguments."""
    found = []
    for where, text in blocks("bash"):
        for line in text.splitlines():
            for command in line.split("#", 1)[0].split("&&"):
                words = shlex.split(command)
                if words and words[0].endswith("streamwarden"):
                    found.append((where, words[1:]))
    return found


def test_every_command_of_the_docs_is_one_the_cli_takes():
    commands = command_lines()
    assert len(commands) >= 15
    parser = build_parser()
    for where, argv in commands:
        _, unknown = parser.parse_known_args(argv)
        assert unknown == [], f"{where}: streamwarden {' '.join(argv)}: {unknown} unknown"
