"""``streamwarden generate``: traffic for trying a pipeline, written so that a pipeline reading
the folder takes every record of every call, on time."""

from __future__ import annotations

import json

import pytest

from streamwarden.cli.main import main
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from tests.support import pipeline_config


def records(folder, prefix: str) -> list[str]:
    return [
        line
        for path in sorted(folder.glob(f"{prefix}-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def millis(line: str) -> int | None:
    """The event time of a generated record in epoch millis; None if it has none."""
    from datetime import datetime

    try:
        ts = json.loads(line).get("ts")
        if isinstance(ts, str):
            return int(datetime.fromisoformat(ts).timestamp() * 1000)
    except (ValueError, AttributeError):  # the malformed records the generator adds
        return None
    return ts if isinstance(ts, int) else None


def test_a_second_call_adds_files_of_its_own_after_the_first_calls_events(tmp_path, capsys):
    landing = tmp_path / "landing"
    assert main(["generate", str(landing), "--events", "500", "--files", "2"]) == 0
    assert "wrote 500 records" in capsys.readouterr().out
    first = records(landing, "gen-001")
    assert main(["generate", str(landing), "--events", "300", "--files", "3"]) == 0
    assert records(landing, "gen-001") == first  # untouched
    second = records(landing, "gen-002")
    assert len(first) == 500 and len(second) == 300
    assert len(list(landing.glob("gen-002-*.jsonl"))) == 3
    first_times = [t for line in first if (t := millis(line)) is not None]
    second_times = [t for line in second if (t := millis(line)) is not None]
    assert min(second_times) > max(first_times)


def test_a_call_after_the_folder_was_emptied_still_writes_new_names_later_in_time(tmp_path):
    # Spark reads a file name once and skips files older than those it has seen
    landing = tmp_path / "landing"
    main(["generate", str(landing), "--events", "200", "--files", "2"])
    first = {p.name: p.stat().st_mtime for p in landing.glob("*.jsonl")}
    first_latest = max(t for line in records(landing, "gen-001") if (t := millis(line)))
    for path in landing.glob("*.jsonl"):
        path.unlink()  # a user archives what the pipeline has read
    main(["generate", str(landing), "--events", "200", "--files", "2"])
    second = {p.name: p.stat().st_mtime for p in landing.glob("*.jsonl")}
    assert not set(second) & set(first)
    assert min(second.values()) > max(first.values())
    second_times = [t for line in records(landing, "gen-002") if (t := millis(line))]
    assert min(second_times) > first_latest


def test_start_sets_the_first_event_time(tmp_path, capsys):
    landing = tmp_path / "landing"
    assert main(["generate", str(landing), "--events", "50", "--start", "2027-05-01"]) == 0
    assert "event time 2027-05-01 00:00" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argument",
    [
        ["--late", "1.5"],
        ["--late", "0.6"],
        ["--malformed", "-0.1"],
        ["--files", "0"],
        ["--start", "soon"],
    ],
)
def test_out_of_range_arguments_are_usage_errors(tmp_path, argument, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["generate", str(tmp_path / "landing"), *argument])
    assert caught.value.code == 2
    assert "streamwarden generate: error: argument" in capsys.readouterr().err


def test_a_file_in_place_of_the_folder_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "landing").write_text("")
    assert main(["generate", str(tmp_path / "landing")]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err
    assert main(["generate", str(tmp_path / "landing" / "sub")]) == 2
    assert "cannot write into" in capsys.readouterr().err


def test_an_empty_folder_name_is_refused_rather_than_read_as_the_current_folder(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["generate", ""])
    assert caught.value.code == 2
    assert "give the folder to write into" in capsys.readouterr().err


@pytest.mark.spark
def test_a_pipeline_accounts_for_every_record_of_two_calls(spark, tmp_path, capsys):
    landing = tmp_path / "landing"
    main(["generate", str(landing), "--events", "1500", "--users", "100", "--files", "2"])
    main(["generate", str(landing), "--events", "1000", "--users", "100", "--files", "2"])
    config = pipeline_config(tmp_path, spark={"shuffle_partitions": 2})
    Pipeline(config, spark).run(once=True, drain=True)
    assert config.sinks["sessions"] is not None
    accounting = account(
        spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, input_records=2500
    )
    assert accounting.balanced, accounting.describe()
    # the second call's ~1000 records were on time, not behind the first call's watermark
    assert accounting.dead_letters.get("too_late", 0) < 100, accounting.describe()


def test_ctrl_c_says_the_files_already_written_stay(tmp_path, monkeypatch, capsys):
    from streamwarden.local import generator

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(generator, "generate_traffic", interrupted)
    assert main(["generate", str(tmp_path / "landing")]) == 130
    assert capsys.readouterr().err == "Interrupted; files already written stay, whole.\n"
