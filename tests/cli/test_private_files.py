"""Files a pipeline writes (sessions, dead letters, checkpoint, progress log, status file, logs,
reports) are readable by their owner only unless ``file_umask`` says otherwise, and a setting
that looks like a secret reaches none of them (docs/failure-modes.md#readable-outputs)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.errors import ConfigError
from tests.config.test_loader import MINIMAL
from tests.support import pageview, write_batches

pytestmark = pytest.mark.spark

SECRET_VALUE = "sw-test-not-a-real-secret-4711"
SECRET = f'[spark.conf]\n"spark.hadoop.fs.s3a.secret.key" = "{SECRET_VALUE}"\n'


def written(root: Path) -> list[Path]:
    """Every file and folder under ``root`` except the landing folder and config the test
    wrote."""
    ours = ("landing", "pipeline.toml")
    return [p for p in root.rglob("*") if not set(ours) & set(p.relative_to(root).parts)]


def run_and_report(root: Path, config_text: str) -> list[Path]:
    config = root / "pipeline.toml"
    config.write_text(config_text)
    write_batches(
        root / "landing",
        [[pageview("a", 0), pageview("b", 1), '{"user_id": "c", "ts": "not a time"}', "{oops"]],
    )
    assert main(["run", str(config), "--once", "--drain", "--skip-doctor"]) == 0
    progress = root / "out" / "checkpoint.progress"
    assert main(["report", str(progress)]) == 0
    return written(root)


@pytest.fixture(scope="module")
def default_run(spark, tmp_path_factory):
    """One run with the default umask and a secret-looking setting, and its report."""
    root = tmp_path_factory.mktemp("private")
    return root, run_and_report(root, MINIMAL + SECRET)


def test_everything_a_run_writes_is_readable_by_its_owner_only(default_run):
    workdir, paths = default_run
    names = {p.name for p in paths}
    # what the run is expected to have written, so that the check below covers it
    assert {"progress.jsonl", "status.json", "report.html", "pipeline.json"} <= names
    assert any(p.suffix == ".parquet" and "dead" in p.parts for p in paths)
    assert any(p.suffix == ".parquet" and "sessions" in p.parts for p in paths)
    assert any("commits" in p.parts for p in paths)
    open_to_others = {
        str(p.relative_to(workdir)): oct(stat.S_IMODE(p.stat().st_mode))
        for p in paths
        if stat.S_IMODE(p.stat().st_mode) & 0o077
    }
    assert open_to_others == {}


def test_a_setting_that_looks_like_a_secret_is_in_no_file_the_run_writes(default_run):
    _, paths = default_run
    holding = [str(p) for p in paths if p.is_file() and SECRET_VALUE.encode() in p.read_bytes()]
    assert holding == []


def test_file_umask_lets_the_group_read_what_the_run_writes_itself(spark, workdir, capsys):
    """(Spark's own files follow it in the JVM a run starts; this test shares one JVM.)"""
    paths = run_and_report(workdir, 'file_umask = "027"\n' + MINIMAL)
    capsys.readouterr()
    progress = [p for p in paths if p.name in ("progress.jsonl", "status.json", "pipeline.json")]
    assert len(progress) == 3
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o040 for p in progress)
    assert not any(stat.S_IMODE(p.stat().st_mode) & 0o007 for p in paths)


@pytest.mark.parametrize(
    ("umask", "says"), [("0777", "three octal digits"), ("277", "takes reading or writing")]
)
def test_a_file_umask_that_is_not_one_or_locks_out_the_owner_is_refused(tmp_path, umask, says):
    path = tmp_path / "p.toml"
    path.write_text(f'file_umask = "{umask}"\n' + MINIMAL)
    with pytest.raises(ConfigError, match=says):
        load_config(path)
