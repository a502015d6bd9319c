"""``streamwarden generate``: traffic for trying a pipeline, written so that a pipeline reading
the folder takes every record of every call, on time; ``--example`` writes another example's
data, by default into that example's own landing folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from tests.support import pipeline_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def records(folder, prefix: str) -> list[str]:
    return [
        line
        for path in sorted(folder.glob(f"{prefix}-*.jsonl"))
        for line in path.read_bytes().decode("utf-8", "replace").splitlines()
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


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A folder with the example configs in examples/, as a checkout's root: the current one."""
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("*.jsonl"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("example", "landing"),
    [
        ("payments", "examples/payments/landing"),
        ("logins", "examples/logins/landing"),
        ("pageviews", "examples/landing"),
    ],
)
def test_an_example_without_a_folder_goes_into_its_own_landing_folder(
    checkout, example, landing, capsys
):
    assert main(["generate", "--example", example, "--users", "20", "--files", "3"]) == 0
    written = sorted((checkout / landing).glob("gen-001-*.jsonl"))
    assert len(written) == 3
    assert f"in 3 files to {landing}" in capsys.readouterr().out


def test_an_example_goes_into_the_folder_given_and_a_second_call_comes_after_the_first(
    tmp_path, capsys
):
    landing = tmp_path / "in"
    args = ["generate", "--example", "payments", str(landing), "--users", "30", "--files", "4"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote ") and "payments of 30 accounts" in out
    assert main(args) == 0
    first, second = records(landing, "gen-001"), records(landing, "gen-002")
    assert first and second
    first_mtimes = [p.stat().st_mtime for p in landing.glob("gen-001-*.jsonl")]
    second_mtimes = [p.stat().st_mtime for p in landing.glob("gen-002-*.jsonl")]
    assert min(second_mtimes) > max(first_mtimes)
    assert min(_at(line) for line in second if _at(line)) > max(
        _at(line) for line in first if _at(line)
    )


def _at(line: str) -> str | None:
    """A valid payment's time as RFC 3339 text in UTC (they sort as times), else None."""
    try:
        at = json.loads(line).get("at")
    except ValueError:
        return None
    return at if isinstance(at, str) and at.startswith("20") and at.endswith("Z") else None


def test_the_same_call_writes_the_same_records(tmp_path):
    for folder in ("a", "b"):
        assert main(["generate", "--example", "logins", str(tmp_path / folder)]) == 0
    assert records(tmp_path / "a", "gen-001") == records(tmp_path / "b", "gen-001")


def test_neither_a_folder_nor_an_example_is_a_usage_error(capsys):
    assert main(["generate"]) == 2
    assert "give the landing folder to write into, or --example NAME" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--events", "10"], ["--late", "0.1"], ["--malformed", "0"]])
def test_the_pageview_options_are_refused_for_another_example(tmp_path, option, capsys):
    assert main(["generate", "--example", "payments", str(tmp_path), *option]) == 2
    assert "is for the pageviews" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.jsonl"))


def test_an_example_s_own_folder_needs_the_example_configs(tmp_path, monkeypatch, capsys):
    from streamwarden.local.examples import catalog

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(catalog, "__file__", str(tmp_path / "a" / "b" / "c" / "d" / "e.py"))
    assert main(["generate", "--example", "logins"]) == 2
    assert "run from the root of a checkout" in capsys.readouterr().err
