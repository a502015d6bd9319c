"""What ``streamwarden run`` and the demos print while a pipeline runs: the ``running ...``
line, then one line per micro-batch whose numbers agree with the progress log and the README."""

from __future__ import annotations

import io
from typing import Any

import pytest

from streamwarden.cli.run import _announce
from streamwarden.config import load_config
from streamwarden.config.model import PipelineConfig
from streamwarden.operators.patterns.step import PatternBatchStats
from streamwarden.operators.sessions.operator import SessionBatchStats as BatchStats
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.pipeline.runner import ticks_dir
from streamwarden.plan import PipelinePlan
from tests.config.test_loader import MINIMAL, write
from tests.config.test_pattern_config import PATTERN

#: What Spark reports as the watermark before the query has one.
NO_WATERMARK = "1970-01-01T00:00:00.000Z"


@pytest.fixture
def sessions_config(tmp_path) -> PipelineConfig:
    return load_config(write(tmp_path, MINIMAL))


def progress(
    config: PipelineConfig,
    batch_id: int,
    *,
    records: int = 0,
    ticks: int = 0,
    state: int = 0,
    watermark: str = NO_WATERMARK,
) -> dict[str, Any]:
    """A batch's progress as Spark reports it: the landing source and the tick source are two
    sources of one query, and ``numInputRows`` is their sum."""
    return {
        "batchId": batch_id,
        "numInputRows": records + ticks,
        "sources": [
            {"description": f"FileStreamSource[file:{path}]", "numInputRows": rows}
            for path, rows in ((config.source.path, records), (ticks_dir(config), ticks))
        ],
        "stateOperators": [{"numRowsTotal": state}],
        "eventTime": {"watermark": watermark},
        "durationMs": {"triggerExecution": 1500},
    }


def printed(config: PipelineConfig, *batches: tuple[dict[str, Any], Any]) -> list[str]:
    out = io.StringIO()
    printer = ProgressPrinter(config, out)
    for batch, stats in batches:
        printer(batch, stats)
    return out.getvalue().splitlines()


def test_the_drain_tick_is_not_counted_as_input(sessions_config):
    data = progress(sessions_config, 4, records=1_200, watermark="2026-01-01T01:00:00.000Z")
    drain = progress(sessions_config, 5, ticks=1, watermark="2026-01-01T03:00:00.000Z")
    out = io.StringIO()
    printer = ProgressPrinter(sessions_config, out)
    printer(data, BatchStats(4, 0, 0))
    printer(drain, BatchStats(5, 40, 1_150))
    first, second = out.getvalue().splitlines()
    assert "| in     1,200 |" in first
    assert "| in         0 |" in second
    assert printer.rows_in == 1_200


def test_a_batch_before_any_watermark_shows_a_dash_as_the_progress_log_records_null(
    sessions_config,
):
    (line,) = printed(sessions_config, (progress(sessions_config, 0, records=10), None))
    assert "| watermark - |" in line
    assert "1970" not in line


def test_a_batch_with_a_watermark_shows_it_as_spark_wrote_it(sessions_config):
    batch = progress(sessions_config, 3, records=10, watermark="2026-01-01T00:40:00.001Z")
    (line,) = printed(sessions_config, (batch, None))
    assert "| watermark 2026-01-01T00:40:00.001Z |" in line


def pipes(line: str) -> list[int]:
    """Positions of the column separators before the watermark (whose text varies)."""
    head = line[: line.index("| watermark")]
    return [i for i, c in enumerate(head) if c == "|"]


def test_seven_digit_counts_fit_their_columns_of_a_sessions_line(sessions_config):
    small = (progress(sessions_config, 1, records=1, state=1), BatchStats(1, 1, 1, {"x": 1}))
    large = (
        progress(sessions_config, 2_000, records=9_999_999, state=9_999_999),
        BatchStats(2_000, 9_999_999, 9_999_999, {"too_late": 9_999_999}),
    )
    first, second = printed(sessions_config, small, large)
    assert pipes(first) == pipes(second)
    assert "dead letters +9,999,999 |" in second
    assert "sessions +9,999,999 |" in second


def test_seven_digit_counts_fit_their_columns_of_a_patterns_line(tmp_path):
    config = load_config(write(tmp_path, PATTERN))
    small = (progress(config, 1, records=1), PatternBatchStats(1, 1, 1, 1, 0, {"x": 1}))
    big = 9_999_999
    large = (
        progress(config, 2, records=big, state=big),
        PatternBatchStats(2, big, big, big, 0, {"too_late": big}),
    )
    first, second = printed(config, small, large)
    assert pipes(first) == pipes(second)
    assert "matches +9,999,999 | timeouts +9,999,999 | dead letters +9,999,999 |" in second


def test_the_running_line_names_the_dead_letters_sink_too(sessions_config, tmp_path, capsys):
    _announce(PipelinePlan.of(sessions_config), tmp_path / "pipeline.toml")(None)
    line = capsys.readouterr().out.splitlines()[0]
    out = tmp_path / "out"
    assert f"-> {out / 'sessions'}, dead letters: {out / 'dead'} (Spark log:" in line
