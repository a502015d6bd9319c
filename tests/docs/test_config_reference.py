"""docs/reference/configuration.md is generated from the settings models: it must be what the
models give now, and a part registered tomorrow must appear in it without editing the
generator."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from streamwarden.config import reference
from streamwarden.operators.base import OPERATORS
from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings.base import KindSettings
from streamwarden.settings.types import Duration
from streamwarden.sinks.base import SINK_KINDS

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / reference.DEFAULT_PATH


def test_the_committed_reference_is_what_the_models_give():
    generated = reference.render().text
    assert COMMITTED.read_text(encoding="utf-8") == generated, (
        f"{reference.DEFAULT_PATH} is out of date with the settings models; regenerate it with "
        f"`.venv/bin/{reference.COMMAND}` and commit the result"
    )


def test_every_setting_of_every_registered_part_is_listed():
    text = reference.render().text
    for name, operator in OPERATORS.items():
        assert f'### [{name}]: operator = "{name}"' in text
        for field in operator.settings_model.model_fields:
            assert f"| `{field}` |" in text
    for name, kind in SINK_KINDS.items():
        assert f'### [sinks.&lt;output&gt;] kind = "{name}"' in text
        for field in kind.settings_model.model_fields:
            assert f"| `{field}` |" in text


def test_a_row_gives_type_default_limits_and_meaning():
    text = reference.render().text
    assert '| `gap` | duration | `"30m"` |' in text
    assert "| `max_dead_letter_share` | number (> 0, ≤ 1) | `0.5` | a run stops" in text
    assert '| `idle_timeout` | duration or "off" | `"5m"` |' in text
    assert "| `path` | folder | required | The folder the output's batches are written to." in text
    assert '| `progress_log_max_size` | size (≥ 4096) | `"64MiB"` |' in text


class _CountsSettings(OperatorSettings):
    """Counts each key's events per minute."""

    outputs = ("counts",)

    #: How long a count lasts.
    size: Duration
    allowed_lateness: Duration = Field(default=0)


class _S3SinkSettings(KindSettings):
    """A bucket."""

    extra: ClassVar[str | None] = "s3"
    kind: str = "s3"
    bucket: str


class _Part:
    def __init__(self, model: type) -> None:
        self.settings_model = model


@pytest.fixture
def new_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator and a sink kind registered as a new module would register them."""
    monkeypatch.setitem(OPERATORS._items, "counts", _Part(_CountsSettings))
    monkeypatch.setitem(SINK_KINDS._items, "s3", _Part(_S3SinkSettings))


@pytest.mark.usefixtures("new_parts")
def test_a_part_registered_later_appears_without_editing_the_generator():
    ref = reference.render()
    assert '### [counts]: operator = "counts"' in ref.text
    assert "Counts each key's events per minute." in ref.text
    assert "Outputs: `[sinks.counts]`, `[sinks.dead_letters]`." in ref.text
    assert "| `size` | duration | required | How long a count lasts. |" in ref.text
    assert '### [sinks.&lt;output&gt;] kind = "s3"' in ref.text
    assert "Install: `pip install 'streamwarden[s3]'`." in ref.text
    assert "counts.allowed_lateness" in ref.undescribed
    assert ref.text != COMMITTED.read_text(encoding="utf-8")


def test_check_fails_with_the_command_to_run(tmp_path, capsys):
    stale = tmp_path / "configuration.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert reference.main([str(stale), "--check"]) == 1
    assert reference.COMMAND in capsys.readouterr().err
    assert reference.main([str(stale)]) == 0
    assert reference.main([str(stale), "--check"]) == 0
