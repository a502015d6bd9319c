"""``streamwarden report``: one chart of a progress log, PNG and self-contained HTML, with the
alarm findings marked."""

from __future__ import annotations

from streamwarden.cli.main import main
from streamwarden.monitoring import read_progress_log
from streamwarden.monitoring.progress_log import progress_dir
from streamwarden.monitoring.report import render_report
from tests.monitoring.conftest import BATCHES, NEW_KEYS_PER_BATCH


def test_the_chart_plots_input_duration_state_and_checkpoint_bytes(leaking_run, tmp_path):
    records = read_progress_log(progress_dir(leaking_run.checkpoint))
    data = render_report(records, tmp_path / "r.png", tmp_path / "r.html")
    state = data.panels["state"]["state rows 0:stateStoreSave"]
    assert state == [(b, float(NEW_KEYS_PER_BATCH * (b + 1))) for b in range(BATCHES)]
    assert [b for b, _ in data.panels["input"]["input rows/s"]] == list(range(BATCHES))
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
        "input rows/s",
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
