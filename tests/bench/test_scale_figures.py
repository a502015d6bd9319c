"""The scale benchmarks' arithmetic and bookkeeping (bench/scale/common.py, restart.py): the
fixed-plus-per-row fit, the steady median, and which Flink checkpoint a restart resumes from.
Pure Python, no Spark, no Flink."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from scale.common import fit_line, last_quarter_median
from scale.restart import retained_checkpoint


def test_the_fit_splits_batch_time_into_a_fixed_cost_and_a_cost_per_row() -> None:
    a, b = fit_line([(5_000, 300 + 5_000 * 0.02), (50_000, 300 + 50_000 * 0.02)]) or (0, 0)
    assert a == pytest.approx(300)
    assert b == pytest.approx(0.02)


def test_one_batch_size_gives_no_fit() -> None:
    assert fit_line([(5_000, 10.0), (5_000, 12.0)]) is None


def test_the_steady_figure_is_the_median_of_the_last_quarter_of_the_batches() -> None:
    rows = [{"ms": ms} for ms in [900, 800, 700, 600, 500, 400, 13, 10]]
    assert last_quarter_median(rows, "ms") == pytest.approx(11.5)


def test_a_restart_resumes_from_the_newest_complete_flink_checkpoint(tmp_path: Path) -> None:
    for n, complete in ((9, True), (10, True), (11, False)):
        folder = tmp_path / "job-id" / f"chk-{n}"
        folder.mkdir(parents=True)
        if complete:
            (folder / "_metadata").write_bytes(b"x")
    assert retained_checkpoint(tmp_path).name == "chk-10"


def test_no_complete_flink_checkpoint_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "job-id" / "chk-1").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="no complete checkpoint"):
        retained_checkpoint(tmp_path)
