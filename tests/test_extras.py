"""The extras: pyproject.toml's optional dependencies and streamwarden.extras' table agree, and a
missing extra is one line naming the ``pip install`` that brings it."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from streamwarden.errors import ConfigError
from streamwarden.extras import EXTRAS, install_command, missing_extra, require_extra

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
#: Extras that bring no connector: every extra at once, and the developer's tools.
NOT_CONNECTORS = {"all", "dev"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_extra_of_pyproject_is_in_the_table_and_every_entry_is_an_extra():
    assert set(OPTIONAL) - NOT_CONNECTORS == set(EXTRAS)


def test_all_is_exactly_every_other_connector_extra():
    union = [r for extra in EXTRAS for r in OPTIONAL[extra]]
    assert sorted(OPTIONAL["all"]) == sorted(union)


def test_no_connector_is_a_core_dependency():
    core = _names(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    extras = _names([r for extra in EXTRAS for r in OPTIONAL[extra]])
    assert core.isdisjoint(extras)
    assert core == {
        "pyspark",
        "pyarrow",
        "pandas",
        "pydantic",
        "pyyaml",
        "prometheus-client",
        "protobuf",  # what Spark's Python transformWithState speaks: keyed processors are core
    }


def test_this_environment_has_every_extra():
    assert all(missing_extra(extra) is None for extra in EXTRAS)


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_a_missing_module_makes_its_extra_missing_with_the_command_that_installs_it(
    monkeypatch, extra
):
    for module in EXTRAS[extra]:
        monkeypatch.setitem(sys.modules, module, None)  # find_spec answers None: not installed
    assert missing_extra(extra) == f"pip install 'streamwarden[{extra}]'"


def test_require_extra_is_one_line_naming_who_asked_and_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)
    with pytest.raises(ConfigError) as caught:
        require_extra("kafka", "[source] kind = 'kafka'")
    assert str(caught.value) == (
        "[source] kind = 'kafka' needs the kafka extra: pip install 'streamwarden[kafka]'"
    )
    assert caught.value.exit_code == 2


def test_require_extra_is_silent_when_installed():
    require_extra("delta", "[sinks.sessions] kind = 'delta'")


def test_an_unknown_extra_is_a_bug_of_the_caller():
    with pytest.raises(KeyError):
        missing_extra("kafak")


def test_the_install_command_quotes_the_brackets_for_the_shell():
    assert install_command("report") == "pip install 'streamwarden[report]'"


def test_report_without_matplotlib_is_one_line_naming_the_install(monkeypatch, tmp_path, capsys):
    from streamwarden.cli.main import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["report", str(tmp_path / "progress.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "Error: streamwarden report needs the report extra: pip install 'streamwarden[report]'"
    ]
