"""Landing files Spark cannot read exactly once are moved aside before Spark lists them, listed
with their reason and record count (``bad_file``), and the pipeline reads the rest: every
record is in a session, a dead letter, or a quarantined file, counted once (issue 19, defects
2 and 3)."""

from __future__ import annotations

import gzip
import json

import pytest

from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from streamwarden.pipeline.query_runner import user_input_rows
from streamwarden.sources.landing_guard import QUARANTINE, bad_files
from tests.support import pageview, pipeline_config, write_batches

GOOD = [[pageview("u1", 0), pageview("u2", 1)], [pageview("u1", 2), "not json"]]
BAD_NAMES = {
    "glob-star-*.jsonl": [pageview("g1", 3)],
    "glob-class-[01].jsonl": [pageview("g2", 3), pageview("g2", 4)],
    "glob-brace-{a,b}.jsonl": [pageview("g3", 3)],
    "events-2026-11-24T03:00:00Z.jsonl": [pageview("c1", 3)],
}


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-landing")
    landing = root / "landing"
    write_batches(landing, GOOD)
    for name, lines in BAD_NAMES.items():
        (landing / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (landing / "whole.jsonl.gz").write_bytes(
        gzip.compress((pageview("z1", 5) + "\n" + pageview("z1", 6) + "\n").encode())
    )
    many = "".join(pageview(f"t{i}", 7) + "\n" for i in range(2000)).encode()
    packed = gzip.compress(many)
    (landing / "truncated.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    (landing / "notes.txt").write_text("not input: the pattern leaves it alone\n")
    config = pipeline_config(root, source={"max_files_per_trigger": 10})
    result = Pipeline(config, spark).run(once=True, drain=True)
    read = sum(user_input_rows(p, config) for p in result.progress)
    accounting = account(
        spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, read
    )
    return landing, result, read, accounting, account_run(spark, config, read).describe()


def test_names_with_glob_characters_or_a_colon_are_moved_aside_not_read(run):
    landing, result, _, _, _ = run
    listed = {bad.name: bad for bad in bad_files(landing)}
    for name, lines in BAD_NAMES.items():
        assert not (landing / name).exists()
        assert (landing / QUARANTINE / name).read_text().count("\n") == len(lines)
        assert listed[name].reason == "unreadable_name"
        assert listed[name].records == len(lines)
    assert any("glob-star-*.jsonl" in line and "bad_file" in line for line in result.set_aside)


def test_a_truncated_gzip_is_moved_aside_with_the_lines_before_the_damage(run):
    landing, _, _, _, _ = run
    bad = {b.name: b for b in bad_files(landing)}["truncated.jsonl.gz"]
    assert bad.reason == "corrupt_gzip"
    assert 0 < (bad.records or 0) < 2000
    assert (landing / QUARANTINE / "truncated.jsonl.gz").exists()


def test_spark_read_each_record_of_the_good_files_exactly_once(run):
    """Counted from what Spark reported reading, not from what was written: 4 lines of the
    two plain files and 2 of the whole gzip; the text file is not input."""
    _, _, read, accounting, _ = run
    assert read == 4 + 2
    assert accounting.balanced, accounting.describe()
    assert accounting.events_in_sessions == 5 and accounting.dead_letters == {"malformed_json": 1}
    assert (run[0] / "notes.txt").exists()


def test_the_quarantine_listing_is_json_lines_with_reason_and_detail(run):
    landing, _, _, _, _ = run
    lines = (landing / QUARANTINE / "bad_files.jsonl").read_text().splitlines()
    assert len(lines) == len(BAD_NAMES) + 1
    for line in lines:
        entry = json.loads(line)
        assert entry["reason"] and entry["detail"] and entry["moved_to"].startswith(str(landing))


def test_the_accounting_line_counts_the_records_of_the_files_set_aside(run):
    landing, _, read, _, line = run
    bad = sum(b.records or 0 for b in bad_files(landing))
    assert bad > len(BAD_NAMES)  # the glob and colon names' records and the gzip's lines
    assert line.startswith(
        f"records landed {read + bad} = read {read} + bad_file {bad} (in {len(BAD_NAMES) + 1} "
        "landing file(s) set aside unread"
    )
    assert line.endswith(": balanced")
