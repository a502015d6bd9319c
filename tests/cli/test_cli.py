"""The command line: one clear line per error, exit 2 for usage, 1 for runtime."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamwarden.cli.main import build_parser, main
from tests.config.test_loader import MINIMAL
from tests.config.test_pattern_config import PATTERN
from tests.support import run_command


def test_a_bad_config_exits_2_with_one_error_line(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[sessions]\ngap = "-5m"\n')
    assert main(["run", str(path), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: config")
    assert "sessions.gap" in err and "at org.apache" not in err


def test_drain_without_once_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    assert main(["run", str(path), "--drain"]) == 2
    assert "--drain only works with --once" in capsys.readouterr().err


def test_a_missing_landing_directory_is_a_config_error_naming_it(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    assert main(["run", str(path), "--once"]) == 2
    err = capsys.readouterr().err
    assert "landing directory" in err and str(tmp_path / "landing") in err


@pytest.mark.spark
def test_a_pattern_condition_that_is_not_sql_fails_before_anything_is_announced(
    spark, tmp_path, capsys
):
    path = tmp_path / "p.toml"
    path.write_text(
        PATTERN.replace("where = \"url LIKE '/scan/%'\"\nprevious", 'where = "url LIKE"\nprevious')
    )
    (tmp_path / "landing").mkdir()
    assert main(["run", str(path), "--once", "--skip-doctor"]) == 2
    captured = capsys.readouterr()
    assert "patterns.stages.1 ('other')" in captured.err
    assert "running" not in captured.out  # the pipeline never ran: nothing says it does


@pytest.mark.parametrize("command", [["run", "--once"], ["doctor"]])
def test_a_pattern_that_cannot_be_built_fails_at_load_naming_the_stage(tmp_path, capsys, command):
    path = tmp_path / "p.toml"
    path.write_text(PATTERN.replace('name = "other"\n', 'name = "other"\ngreedy = true\n'))
    (tmp_path / "landing").mkdir()
    assert main([command[0], str(path), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: config {str(path)!r} is invalid:")
    assert "stages.1 ('other'): greedy() needs a looping stage" in err


@pytest.mark.parametrize("command", [["run", "p.toml"], ["inspect", "checkpoint"]])
def test_an_unknown_option_is_reported_with_the_usage_of_its_command(command, capsys):
    with pytest.raises(SystemExit) as caught:
        main([*command, "--bogus"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: streamwarden {command[0]} [-h]")
    assert "unrecognized arguments: --bogus" in err


def test_an_unknown_command_exits_2():
    with pytest.raises(SystemExit) as caught:
        main(["bogus"])
    assert caught.value.code == 2


@pytest.mark.spark
def test_demo_patterns_shows_matches_live_and_balances_its_accounting(spark, workdir, capsys):
    args = ["--out", str(workdir / "demo"), "--events", "400", "--users", "20"]
    assert main(["demo", "patterns", *args, "--actors", "4", "--batches", "4"]) == 0
    out = capsys.readouterr().out
    assert "match actor-" in out  # a match printed under its batch's line
    assert "0 ordinary users matched" in out
    assert out.rstrip().splitlines()[-2].endswith(": balanced")


def help_of(capsys, *command: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main([*command, "--help"])
    assert caught.value.code == 0
    return capsys.readouterr().out


def test_every_command_registers_its_parser_and_its_handler():
    commands = build_parser().parse_args(["doctor", "p.toml"]).command_parsers
    listed = (
        "run", "submit", "demo", "status", "report", "inspect", "rescale", "maintain", "doctor",
        "generate", "jars",
    )  # fmt: skip
    assert tuple(commands) == listed  # in the order --help lists them
    for name, parser in commands.items():
        assert callable(parser.get_default("handler")), name


def test_building_the_command_line_imports_no_spark():
    # every command registers at start-up; what loads Spark waits for its handler
    code = (
        "import sys; from streamwarden.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_top_level_help_is_plain_text_without_docstring_markup(capsys):
    out = help_of(capsys)
    assert "streamwarden: run a pipeline or the demo" in out
    assert "``" not in out


def test_every_demo_option_says_what_it_does_and_its_default(capsys):
    parser = build_parser()
    demo = parser.parse_args(["demo"]).command_parsers["demo"]
    options = [a for a in demo._actions if a.option_strings and a.dest != "help"]
    assert {a.dest for a in options} >= {"events", "users", "seed", "actors", "batches"}
    for action in options:
        assert action.help and "default" in action.help, action.dest
    out = " ".join(help_of(capsys, "demo").split())  # as one line, however argparse wraps it
    for default in ("60000", "1000", "7", "40", "30"):
        assert f"default: {default})" in out or f"default: {default};" in out, default


def test_the_batches_option_says_the_run_adds_batches_without_input(capsys):
    out = " ".join(help_of(capsys, "demo").split())
    assert "input files to split the records into, each read as one micro-batch" in out
    assert "adds a few batches with no input" in out


def test_the_terminal_shows_no_jvm_output_which_goes_to_the_log_file(tmp_path):
    # Spark's launcher always adds an incubator module, and the JVM warns about it on start-up
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[monitoring]\nprometheus_port = "off"\n')
    (tmp_path / "landing").mkdir()
    done = subprocess.run(run_command(path, "--once"), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr and "incubator" not in done.stderr
    log = (tmp_path / "out" / "sessions.log").read_text()
    assert "Using incubator modules" in log
