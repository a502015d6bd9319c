"""A new part is one module: a sink kind or an operator written outside the package (here, in
this test) and registered is configured, checked and opened like the built-in ones, with no
change to the config: the config is assembled from the registries, each part's section
validated by the part's own settings model (docs/architecture.md, "Where to add things")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field

from streamwarden.config import load_config
from streamwarden.errors import ConfigError
from streamwarden.operators.base import OPERATORS
from streamwarden.operators.sessions.operator import SessionsOperator
from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.types import Duration
from streamwarden.sinks.base import SINK_KINDS, STANDALONE, OutputShape, open_sink
from tests.config.test_loader import MINIMAL, write


class CountingSinkSettings(KindSettings):
    """A throwaway sink kind's own settings."""

    kind: Literal["counting"]
    label: str = Field(min_length=1)


class CountingSink:
    """A throwaway sink kind: counts the batches it is given."""

    settings_model = CountingSinkSettings

    def __init__(self, name: str, label: str) -> None:
        self.name, self.label, self.batches = name, label, 0

    @staticmethod
    def check(name: str, settings: KindSettings, context: RunContext) -> None:
        pass

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        return ()

    @staticmethod
    def spark_conf(settings: KindSettings, context: RunContext) -> dict[str, str]:
        return {}

    @staticmethod
    def where(settings: KindSettings) -> str:
        assert isinstance(settings, CountingSinkSettings)
        return f"counter {settings.label}"

    @classmethod
    def open(
        cls, name: str, settings: KindSettings, context: RunContext, shape: OutputShape = STANDALONE
    ) -> CountingSink:
        assert isinstance(settings, CountingSinkSettings)
        return cls(name, settings.label)

    def write_batch(self, rows: Any, batch_id: int) -> bool:
        self.batches += 1
        return True

    def written_batches(self) -> list[int]:
        return []

    def read(self, spark: Any) -> None:
        return None


class EchoSettings(OperatorSettings):
    """A throwaway operator's own section, with the outputs it declares."""

    outputs: ClassVar[tuple[str, ...]] = ("echoes",)
    needs: ClassVar[str | None] = "its delay"

    delay: Duration


class EchoOperator(SessionsOperator):
    """A throwaway operator (the sessions operator's behaviour under another name and
    section): only its registration and its section matter here."""

    name = "echo"
    settings_model = EchoSettings  # type: ignore[assignment]

    def check(self, config: Any) -> None:
        """What only the operator can check, run when the config is loaded."""
        if config.section.delay > timedelta(hours=1):
            raise ConfigError("echo.delay must be at most 1h")


@pytest.fixture
def registered(monkeypatch):
    """The throwaway parts registered for one test, and gone after it."""
    monkeypatch.setitem(SINK_KINDS._items, "counting", CountingSink)
    monkeypatch.setitem(OPERATORS._items, "echo", EchoOperator())


COUNTING = MINIMAL.replace("[sinks.dead_letters]\n", '[sinks.dead_letters]\nkind = "counting"\n')


def test_a_new_sink_kind_is_configured_by_its_own_model_and_opened(tmp_path, registered):
    config = load_config(write(tmp_path, COUNTING.replace('path = "out/dead"', 'label = "x"')))
    settings = config.sinks["dead_letters"]
    assert isinstance(settings, CountingSinkSettings) and settings.label == "x"
    sink = open_sink("dead_letters", config.context)
    assert isinstance(sink, CountingSink) and sink.label == "x"


def test_a_new_sink_kind_refuses_another_kinds_setting_naming_it(tmp_path, registered):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, COUNTING))  # path, a parquet sink's setting
    message = str(caught.value)
    assert "sinks.dead_letters.path is not a setting of kind 'counting'; remove it" in message
    assert "sinks.dead_letters.label: required setting is missing" in message


def test_without_its_registration_the_kind_is_unknown(tmp_path):
    with pytest.raises(ConfigError, match="unknown sink kind 'counting'; known kinds: delta"):
        load_config(write(tmp_path, COUNTING.replace('path = "out/dead"', 'label = "x"')))


ECHO = (
    'operator = "echo"\n'
    + MINIMAL.replace("[sinks.sessions]", "[sinks.echoes]")
    + '[echo]\ndelay = "5m"\n'
)


def test_a_new_operator_brings_its_section_and_its_outputs(tmp_path, registered):
    config = load_config(write(tmp_path, ECHO))
    assert isinstance(config.section, EchoSettings)
    assert config.section.delay == timedelta(minutes=5)
    assert set(config.sinks) == {"echoes", "dead_letters"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ECHO.replace("[sinks.echoes]", "[sinks.sessions]"), "needs [sinks.echoes]"),
        (ECHO.replace('[echo]\ndelay = "5m"\n', ""), "needs a [echo] section with its delay"),
        (ECHO + "[sessions]\ngap = '1m'\n", "[sessions] needs operator = 'sessions'"),
        (ECHO.replace("[sinks.echoes]", "[sinks.echos]"), "needs [sinks.echoes]"),
        (ECHO.replace("delay", "delai"), "echo.delai: unknown setting"),
        (ECHO.replace('"5m"', '"2h"'), "echo.delay must be at most 1h"),
    ],
    ids=[
        "others-output",
        "no-section",
        "others-section",
        "misspelt-output",
        "unknown-key",
        "operators-own-check",
    ],
)
def test_a_new_operators_section_and_outputs_are_checked_at_load(
    tmp_path, registered, text, expected
):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert expected in str(caught.value)


def test_an_output_no_operator_declares_is_refused_naming_the_outputs(tmp_path):
    text = MINIMAL + '[sinks.sesions]\npath = "out/typo"\n'
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert (
        "sinks.sesions is not an output of operator 'sessions' (its outputs: dead_letters, "
        "sessions); remove it or check its spelling"
    ) in str(caught.value)
