"""``streamwarden report``: one chart of a progress log, PNG and self-contained HTML, with the
alarm findings marked."""

from __future__ import annotations

import matplotlib.pyplot as plt

from streamwarden.cli.main import main
from streamwarden.monitoring import read_progress_log
from streamwarden.monitoring.progress_log import BatchRecord, progress_dir
from streamwarden.monitoring.report import build_report_data, draw_chart, render_report
from streamwarden.monitoring.summary import BatchSummary, OperatorSummary
from tests.monitoring.conftest import BATCHES, NEW_KEYS_PER_BATCH


def test_the_chart_plots_input_duration_state_and_checkpoint_bytes(leaking_run, tmp_path):
    records = read_progress_log(progress_dir(leaking_run.checkpoint))
    data = render_report(records, tmp_path / "r.png", tmp_path / "r.html")
    state = data.panels["state"]["state rows 0:stateStoreSave"]
    assert state == [(b, float(NEW_KEYS_PER_BATCH * (b + 1))) for b in range(BATCHES)]
    assert [b for b, _ in data.panels["input"]["input rows per batch"]] == list(range(BATCHES))
    assert all(v > 0 for _, v in data.panels["duration"]["batch duration"])
    assert all(v > 0 for _, v in data.panels["checkpoint"]["state bytes written"])
    assert all(v > 0 for _, v in data.panels["checkpoint"]["metadata bytes"])
    assert {f.kind for f in data.findings} == {"state_growth", "slow_batch"}


def test_the_files_are_a_png_and_an_html_page_with_the_series_and_findings(leaking_run, tmp_path):
    records = read_progress_log(progress_dir(leaking_run.checkpoint))
    render_report(records, tmp_path / "r.png", tmp_path / "r.html")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "r.html").read_text()
    assert "<svg" in page and "<img" not in page and "http" not in page.split("<svg")[0]
    for label in (
        "state rows 0:stateStoreSave",
        "input rows per batch",
        "batch duration",
        "state bytes written",
        "metadata bytes",
        "alarm: state_growth",
    ):
        assert label in page, label
    assert "grew from 300 to" in page  # the finding's sentence, in the table


def test_the_command_writes_both_files_beside_the_log(leaking_run, capsys):
    log = progress_dir(leaking_run.checkpoint) / "progress.jsonl"
    assert main(["report", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"{BATCHES} batches of 'leaking_count'" in out
    assert "alarms: slow_batch, state_growth" in out
    assert (log.parent / "report.png").stat().st_size > 10_000
    assert (log.parent / "report.html").stat().st_size > 10_000


def test_a_missing_log_is_a_usage_error_that_says_where_it_should_be(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    assert "no progress log at" in capsys.readouterr().err


def available_now_batch(batch_id: int, input_rows: int) -> BatchRecord:
    """A batch as a ``run --once`` reports it: rows came in, but Spark's input rate, measured
    between triggers, is 0 (an availableNow query has no trigger interval)."""
    op = OperatorSummary(0, "agg", 100 * (batch_id + 1), 100, 0, 0, 0)
    summary = BatchSummary(
        "q", batch_id, 0, input_rows, 0.0, 2_000.0, {"triggerExecution": 500}, None, None, [op]
    )
    return BatchRecord(summary)


def test_the_input_panel_plots_rows_per_batch_so_a_run_once_is_not_flat_at_zero():
    data = build_report_data([available_now_batch(0, 500), available_now_batch(1, 700)])
    assert data.panels["input"] == {"input rows per batch": [(0, 500.0), (1, 700.0)]}


def test_the_batch_axis_is_ticked_at_whole_batch_ids_only():
    records = [available_now_batch(0, 500), available_now_batch(1, 700)]
    fig = draw_chart(build_report_data(records), len(records))
    try:
        ticks = fig.axes[-1].get_xticks()
    finally:
        plt.close(fig)
    assert len(ticks) >= 2
    assert all(t == int(t) for t in ticks), ticks
