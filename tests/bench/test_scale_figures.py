"""The scale benchmarks' arithmetic and bookkeeping (bench/scale/common.py, flink_job.py,
flink_rate.py, flink_transfer.py): the fixed-plus-per-row fit, the steady median, which Flink
checkpoint a restart resumes from, a Flink job's steady event rate from its samples, the
sampler's handling of the job's processes, the order in which files are landed for a live Flink
job, the Flink command, and its JVM's GC log. No Spark, no Flink."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from scale.common import fit_line, flink_jvm_env, gc_summary, last_quarter_median
from scale.flink_job import retained_checkpoint
from scale.flink_rate import rate, sample_job
from scale.flink_transfer import FeedOrder, restore_seconds


def test_the_fit_splits_batch_time_into_a_fixed_cost_and_a_cost_per_row() -> None:
    a, b = fit_line([(5_000, 300 + 5_000 * 0.02), (50_000, 300 + 50_000 * 0.02)]) or (0, 0)
    assert a == pytest.approx(300)
    assert b == pytest.approx(0.02)


def test_one_batch_size_gives_no_fit() -> None:
    assert fit_line([(5_000, 10.0), (5_000, 12.0)]) is None


def test_the_steady_figure_is_the_median_of_the_last_quarter_of_the_batches() -> None:
    rows = [{"ms": ms} for ms in [900, 800, 700, 600, 500, 400, 13, 10]]
    assert last_quarter_median(rows, "ms") == pytest.approx(11.5)


def test_the_gc_log_gives_the_live_heap_after_the_latest_old_generation_collection(
    tmp_path: Path,
) -> None:
    log = tmp_path / "gc.log"
    log.write_text(
        "[0.003s][info][gc] Using G1\n"
        "[1.2s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(256M) 3.5ms\n"
        "[9.9s][info][gc] GC(1) Concurrent Mark Cycle\n"
        "[9.0s][info][gc] GC(2) Pause Full (G1 Compaction Pause) 6000M->900M(6028M) 2000.5ms\n"
        "[10.1s][info][gc] GC(3) Pause Young (Mixed) (G1 Evacuation Pause) 900M->700M(6028M) 1ms\n"
        "[10.2s][info][gc] GC(4) Pause Young (Mixed) (G1 Evacuation Pause) 800M->600M(6028M) 1ms\n"
        "[10.3s][info][gc] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 990M->800M(6028M) 1ms\n"
    )
    assert gc_summary(log) == {
        "pauses": 5,
        "pause_seconds": 2.007,  # 3.5 + 1 + 1 + 1 + 2000.5 ms
        "full_collections": 1,
        # after the last mixed collection of the last series, not the earlier full one (900)
        "live_mib": 600,
        "live_at_seconds": 10.2,
        "max_after_gc_mib": 900,
        "heap_size_mib": 6028,
    }
    assert gc_summary(tmp_path / "absent.log") is None


def test_the_flink_jvm_gets_its_heap_and_a_gc_log_through_jvm_args(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    gc = f"-Xlog:gc:file={log}::filecount=0"
    assert flink_jvm_env("16g", log) == {"JVM_ARGS": f"-Xmx16g {gc}"}
    assert flink_jvm_env(None, log) == {"JVM_ARGS": gc}


def test_a_second_run_of_a_point_overwrites_the_gc_log_of_the_first(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    for _ in range(2):
        args = flink_jvm_env(None, log)["JVM_ARGS"].split()
        subprocess.run(["java", *args, "-version"], check=True, capture_output=True)
    assert [p.name for p in tmp_path.iterdir()] == ["gc.log"]  # no gc.log.0 beside it


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


def test_files_land_one_at_a_time_each_once_the_source_has_begun_the_one_before() -> None:
    files = [Path(f"f{i}.jsonl") for i in range(4)]
    order = FeedOrder(files, [100, 100, 50, 100])
    assert order.due(0) == files[0]  # the first at once
    assert order.due(0) is None  # f0 landed, not begun: f1 would wait beside it
    assert order.due(1) == files[1]  # f0 begun
    assert order.due(100) is None  # f0 read, f1 not begun
    assert order.due(101) == files[2]
    assert order.due(200) is None
    assert order.due(201) == files[3]  # f2 (50 events) begun
    assert order.due(10_000) is None  # every file landed
    assert order.fed == 4


def test_a_restore_lasts_until_the_keyed_operator_receives_its_first_record() -> None:
    samples = [{"t": 100, "started": True}, _sample(125, 0), _sample(135, 0), _sample(145, 900)]
    assert restore_seconds(samples) == 45
    assert restore_seconds(samples[:3]) is None  # not restored yet


def _sample(t: float, records: float | None, completed: int = 0) -> dict[str, object]:
    return {"t": t, "records_in": records, "checkpoints": {"completed": completed}}


def test_the_flink_rate_counts_from_past_the_warm_up_to_the_last_sample_that_read_more() -> None:
    samples = [
        _sample(0, 5_000),  # warm-up: 500 events/s, not counted
        _sample(10, 10_000, 3),
        _sample(20, 12_000, 8),  # past the warm-up's 11,000 events: the rate starts here
        _sample(30, 14_000, 13),
        _sample(40, 16_000, 18),  # the last sample that read more
        _sample(50, 16_000, 19),  # end of input: the final flush reads nothing, not counted
        {"t": 60, "error": "gone"},
    ]
    figures = rate(samples, after_events=11_000, batch_events=1_000)
    assert figures["events_per_s"] == pytest.approx(200)
    assert figures["per_batch_ms"] == pytest.approx(5_000)
    assert figures["seconds"] == 20
    assert figures["checkpoints_completed"] == 10
    assert figures["warmup_seconds"] is None  # no start recorded


def test_a_sampled_jobs_warm_up_lasts_from_its_start_to_the_first_sample_past_it() -> None:
    samples = [{"t": 100, "started": True}, _sample(130, 50), _sample(145, 200), _sample(155, 300)]
    assert rate(samples, after_events=100, batch_events=10)["warmup_seconds"] == 45


def test_a_flink_rate_needs_two_samples_past_the_warm_up() -> None:
    with pytest.raises(SystemExit, match="fewer than two samples"):
        rate([_sample(0, 5), _sample(10, 20)], after_events=10, batch_events=1)


def test_a_points_traffic_spans_a_timer_cycle_and_settles_before_its_measured_batches() -> None:
    from scale.state_growth import parse_args, point_traffic

    args = parse_args([])
    # 1M keys, 5k events per batch: a 30-minute timer cycle is 400 batches, the last 400 of 534
    # are measured, and 3 warm-up touches put them past every key's first deadline
    traffic = point_traffic(1_000_000, 5_000, args)
    assert (traffic.steady_batches, traffic.warmup_revisits) == (534, 3)
    assert point_traffic(5_000_000, 5_000, args).steady_batches == 2_667


def test_flink_cep_on_rocksdb_runs_only_when_named() -> None:
    from scale.state_growth import chosen_engines, parse_args

    assert chosen_engines(parse_args(["--workload", "patterns"])) == ["detect", "flink-match"]
    named = parse_args(["--workload", "patterns", "--engines", "detect, flink-match-rocksdb"])
    assert chosen_engines(named) == ["detect", "flink-match-rocksdb"]


def test_flink_runs_the_window_and_out_of_orderness_of_our_runs(tmp_path: Path) -> None:
    from scale.state_growth import CEP_ROCKSDB_CONF, flink_command, parse_args

    args = parse_args(["--flink-conf", "pipeline.cep.sharedbuffer.cache.entry-slots=9"])
    cep = flink_command("flink-match-rocksdb", tmp_path, tmp_path / "cp", args)
    assert cep[cep.index("--within-minutes") + 1] == "30"
    assert cep[cep.index("--out-of-orderness-seconds") + 1] == "60"
    assert cep[cep.index("--state") + 1] == "rocksdb"
    assert "execution.checkpointing.incremental=true" in cep
    confs = [c.removeprefix("--conf=") for c in cep if c.startswith("--conf=")]
    assert confs == [*CEP_ROCKSDB_CONF, "pipeline.cep.sharedbuffer.cache.entry-slots=9"]

    sessions = flink_command("flink-heap", tmp_path, tmp_path / "cp", parse_args([]))
    assert sessions[sessions.index("--gap-minutes") + 1] == "30"
    assert sessions[sessions.index("--state") + 1] == "heap"
    assert "execution.checkpointing.incremental=false" in sessions
    assert not [c for c in sessions if c.startswith("--conf=")]


def test_a_sampled_job_that_fails_is_an_error_naming_its_log(tmp_path: Path) -> None:
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('bad option'); sys.exit(3)"]
    log = tmp_path / "job.log"
    with pytest.raises(RuntimeError, match=r"exit 3\); see .*job\.log"):
        sample_job(failing, log, {}, warmup_events=10, steady_events=10)
    assert log.read_text() == "bad option"


def test_an_exited_child_not_yet_reaped_is_not_alive() -> None:
    from scale.flink_rate import alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, left unreaped
    assert not alive(child.pid)
    child.wait()
    assert not alive(child.pid)
    assert alive(os.getpid())
