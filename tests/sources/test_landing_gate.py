"""A bad landing file that lands while a continuous run is going, between two polls of the
landing guard, is handled exactly as one present at the start: moved aside, never listed or
read by Spark. Spark plans batches on its own thread, at every trigger; the guard sweeps on the
runner's polls; the gate (``LandingFilter.java``) keeps Spark's listing to the files the guard
has passed, so a new file waits, unlisted, for the next poll."""

from __future__ import annotations

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.interrupt import StopRequest
from streamwarden.pipeline.outputs import account
from streamwarden.pipeline.query_runner import user_input_rows
from streamwarden.sources.file_log import files_of_batch, last_committed
from streamwarden.sources.landing_guard import QUARANTINE, LandingGuard, bad_files
from tests.support import pageview, pipeline_config, write_batches

BAD = {
    "late-[1].jsonl": [pageview("g1", 3)],  # a glob character: Spark would glob it again
    "events-2026-11-24T03:00:00Z.jsonl": [pageview("c1", 3)],  # a colon: every batch fails
}


def test_a_guard_tells_its_gate_the_files_it_passed_and_never_a_bad_one(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    guard = LandingGuard(tmp_path, "*.jsonl")
    told: list[list[str]] = []
    guard.sweep()
    guard.on_passed(told.append)  # the names passed so far, at once
    (tmp_path / "b.jsonl").write_text("{}\n")
    (tmp_path / "c:d.jsonl").write_text("{}\n")
    guard.sweep()
    guard.sweep()  # nothing new: nothing told
    assert told == [["a.jsonl"], ["b.jsonl"]]


def test_a_guard_forgets_and_tells_its_gate_the_passed_files_that_are_gone(tmp_path):
    # a retention job deletes read landing files: the guard must not keep their names forever
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text("{}\n")
    guard = LandingGuard(tmp_path, "*.jsonl")
    passed: list[list[str]] = []
    gone: list[list[str]] = []
    guard.on_passed(passed.append)
    guard.on_gone(gone.append)
    guard.sweep()
    (tmp_path / "a.jsonl").unlink()
    guard.sweep()
    guard.sweep()  # nothing more gone: nothing told
    (tmp_path / "a.jsonl").write_text("{}\n")  # a new file under the old name: checked again
    guard.sweep()
    assert passed == [["a.jsonl", "b.jsonl"], ["a.jsonl"]]
    assert gone == [["a.jsonl"]]


@pytest.mark.spark
def test_a_bad_file_landing_between_two_polls_is_moved_aside_and_never_listed(spark, tmp_path):
    landing = tmp_path / "landing"
    write_batches(landing, [[pageview("u1", 0), pageview("u2", 1)]])
    config = pipeline_config(
        tmp_path,
        source={"max_files_per_trigger": 10},
        spark={"trigger_interval": "500ms"},
        monitoring={"prometheus_port": "off"},
    )
    stop = StopRequest()
    read: list[int] = []

    def land_while_running(_: object) -> None:
        # Spark's next trigger (half a second) comes long before the guard's next poll (6 s)
        for name, lines in BAD.items():
            (landing / name).write_text("".join(line + "\n" for line in lines))
        (landing / "good-late.jsonl").write_text(pageview("u3", 2) + "\n")

    def count(progress: dict[str, object], _: object) -> None:
        read.append(user_input_rows(progress, config))  # type: ignore[arg-type]
        if sum(read) >= 3:
            stop.set()

    result = Pipeline(config, spark).run(
        once=False, poll_seconds=6, on_start=land_while_running, on_progress=count, stop=stop
    )

    assert result.stopped is None
    assert sum(read) == 3  # the two first records and the late good one, each once
    quarantined = {bad.name: bad.reason for bad in bad_files(landing)}
    assert quarantined == dict.fromkeys(BAD, "unreadable_name")
    for name in BAD:
        assert (landing / QUARANTINE / name).exists() and not (landing / name).exists()
    log = config.checkpoint.path / "sources" / "0"
    listed = {
        path.rsplit("/", 1)[1]
        for batch in range((last_committed(config.checkpoint.path) or 0) + 1)
        for path in files_of_batch(log, batch)
    }
    assert listed == {"batch-0000.jsonl", "good-late.jsonl"}
    Pipeline(config, spark).run(once=True, drain=True)  # close the sessions left open
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 3)
    assert accounting.balanced, accounting.describe()
