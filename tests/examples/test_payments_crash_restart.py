"""A payments run (a non-pageview schema with six aggregates, their state in RocksDB) killed
with SIGKILL while it writes a batch restarts from its checkpoint to exactly the output of an
uninterrupted run: every session revision with every aggregate, every dead letter, nothing lost
or doubled."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from streamwarden.local.examples.payments import PaymentsSpec, generate_payments
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks.parquet import batch_dir_name
from tests.examples.support import example_config, run_cli
from tests.support import kill_when_written, run_command

pytestmark = pytest.mark.spark

SPEC = PaymentsSpec(accounts=60, files=10, seed=3)
KILL_WHEN_BATCH_WRITTEN = 4


def rows(spark: Any, folder: Path) -> list[tuple[str, ...]]:
    """The output's rows, without what says when they were written (the batch, the ingest
    time of a dead letter)."""
    frame = read_output(spark, folder)
    assert frame is not None
    kept = [c for c in frame.columns if c not in ("batch_id", "ingest_time")]
    return sorted(tuple(map(repr, r)) for r in frame.select(*kept).collect())


@pytest.mark.soak  # fault injection: two pipeline processes, one SIGKILLed (make soak)
def test_a_killed_payments_run_resumes_to_the_output_of_an_uninterrupted_run(spark, tmp_path):
    reference, crashed = tmp_path / "reference", tmp_path / "crashed"
    for root in (reference, crashed):
        generate_payments(SPEC, root / "landing")
    done = run_cli(example_config("payments", reference))
    assert done.returncode == 0, done.stderr[-2000:]

    command = run_command(example_config("payments", crashed), "--once", "--drain")
    kill_when_written(command, crashed / "sessions" / batch_dir_name(KILL_WHEN_BATCH_WRITTEN))
    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr[-2000:]

    for output in ("sessions", "dead_letters"):
        assert rows(spark, crashed / output) == rows(spark, reference / output), output
