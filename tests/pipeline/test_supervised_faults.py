"""Faults of the machine under a running pipeline (issue 19), on the shared SparkSession: the
sink's disk full, the checkpoint folder made read-only mid-run, a landing file deleted after it
was listed. Each is a clear error (or a restart once the fault is gone) and nothing committed is
lost: a run after the fault ends with the output of a run that had none.

The faults are real: a small tmpfs mounted on the sink folder, a read-only bind mount over the
checkpoint (root ignores file modes, not a read-only mount), a file unlinked."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from streamwarden.errors import PipelineError, RestartsExhaustedError, SourceRecordsLostError
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.monitoring.progress_log import progress_dir, read_failures
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from streamwarden.sources.file_log import files_of_batch
from tests.pipeline import faults
from tests.support import pageview, pipeline_config

MARKER = "DELETED-FILE-MARKER-3e1"
SPEC = TrafficSpec(users=40, events=1_200, rate_per_second=0.05, events_per_file=300)
FAST = {"initial_backoff": "100ms", "max_backoff": "200ms"}


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], check=False, capture_output=True, text=True)
    assert done.returncode == 0, f"mount {' '.join(args)}: {done.stderr}"


@contextmanager
def mounted(target: Path, *args: str) -> Iterator[Path]:
    target.mkdir(parents=True, exist_ok=True)
    _mount(*args, str(target))
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)


def _config(root: Path, **supervisor: object):
    return pipeline_config(
        root,
        supervisor={**FAST, **supervisor},
        monitoring={"prometheus_port": "off"},
    )


@pytest.fixture
def reference(spark, workdir) -> Path:
    root = workdir / "reference"
    generate_traffic(SPEC, root / "landing")
    Pipeline(_config(root), spark).run(once=True, drain=True)
    return root


def _same_output(spark, reference: Path, root: Path) -> None:
    expected = faults.outputs(spark, reference, "sessions")
    assert faults.outputs(spark, root, "sessions") == expected
    assert sum(expected["sessions"].values()) > 50


@pytest.mark.soak  # a minute or more each: in `make soak`, not the default run
def test_a_full_sink_disk_gives_up_with_a_report_and_loses_nothing_committed(
    spark, workdir, reference
):
    root = workdir / "full"
    generate_traffic(SPEC, root / "landing")
    with mounted(root / "sessions", "-t", "tmpfs", "-o", "size=48k", "tmpfs"):
        with pytest.raises(RestartsExhaustedError) as failed:
            Pipeline(_config(root, max_restarts=1), spark).run(
                once=True, drain=True, supervise=True
            )
        message = str(failed.value)
        assert "gave up after 1 restart(s) within 0:30:00" in message
        assert "No space left on device" in message
        recorded = read_failures(progress_dir(root / "checkpoint"))
        assert [f.restart for f in recorded] == [1, None]
        assert all(f.batch is not None and "No space left" in f.message for f in recorded)
        # the disk grows: the next run resumes, and nothing committed before is lost
        _mount("-o", "remount,size=64m", str(root / "sessions"))
        Pipeline(_config(root), spark).run(once=True, drain=True)
        _same_output(spark, reference, root)


@pytest.mark.soak  # a minute or more each: in `make soak`, not the default run
def test_a_checkpoint_made_read_only_mid_run_fails_clearly_and_is_restarted_once_writable(
    spark, workdir, reference
):
    root = workdir / "read-only"
    generate_traffic(SPEC, root / "landing")
    checkpoint = root / "checkpoint"
    # its offset and commit logs: a mount with files open for writing (RocksDB's, the run lock)
    # cannot be made read-only, these folders can, and every batch must write to both
    logs = [checkpoint / "offsets", checkpoint / "commits"]

    def after_the_first_batch(progress, stats):
        if progress["batchId"] == 0:
            for folder in logs:
                _mount("--bind", str(folder), str(folder))
                _mount("-o", "remount,bind,ro", str(folder))

    def writable_again(failure):
        for folder in logs:
            subprocess.run(["umount", str(folder)], check=True)

    try:
        result = Pipeline(_config(root), spark).run(
            once=True,
            drain=True,
            supervise=True,
            on_progress=after_the_first_batch,
            on_failure=writable_again,
        )
    finally:
        for folder in logs:
            subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)
    assert len(result.failures) == 1
    assert "Read-only file system" in result.failures[0].message
    assert result.failures[0].restart == 1
    _same_output(spark, reference, root)


def test_a_landing_file_deleted_after_it_was_listed_is_named_with_what_to_do(spark, workdir):
    """Batch 1 is planned with its file (offsets/1, sources/0/1), then fails before it commits
    (the engine's test hook); the file is deleted; the next run replays batch 1 and stops at
    once, naming the file and what to do, without a restart. Once the file is back, the run
    ends with every record in one place: nothing of batch 0, committed, was lost."""
    root = workdir / "deleted"
    landing = root / "landing"
    landing.mkdir(parents=True)
    first, second = landing / "a-first.jsonl", landing / "b-second.jsonl"
    first.write_text(f"{pageview('u1', 0)}\n{pageview('u2', 0)}\n")
    second.write_text(f"{pageview('u1', 1)}\n{pageview('u3', 1, url='/' + MARKER)}\n")
    os.utime(first, (1_700_000_000, 1_700_000_000))  # read first: Spark orders by mtime
    config = _config(root)
    poison = spark._jvm.io.streamwarden.engine.Poison
    poison.failUncaughtOn(MARKER)
    try:
        with pytest.raises(PipelineError):
            Pipeline(config, spark).run(once=True)
    finally:
        poison.failUncaughtOn(None)
    assert files_of_batch(root / "checkpoint" / "sources" / "0", 1) == [second.as_uri()]
    kept = second.read_bytes()
    second.unlink()
    with pytest.raises(SourceRecordsLostError) as failed:
        Pipeline(config, spark).run(once=True, supervise=True)
    message = str(failed.value)
    assert second.name in message
    assert "deleted or moved after the run listed it" in message
    assert "put it back under the same name" in message
    second.write_bytes(kept)
    Pipeline(config, spark).run(once=True, drain=True)
    accounting = account(spark, root / "sessions", root / "dead_letters", 4)
    assert accounting.balanced, accounting.describe()
    assert accounting.describe().startswith("records in 4 = ")
