"""``doctor`` reads a sample of the landing folder with the reader a pipeline validates with:
a ``[schema]`` that does not fit the records (a misspelt field, event times in another unit)
is a finding before the first run, not a folder of dead letters after it. ``run``'s own
checks leave the sample out."""

from __future__ import annotations

import json

from streamwarden.cli.main import main
from streamwarden.doctor import Severity, diagnose
from tests.config.test_loader import MINIMAL, write
from tests.support import PAGEVIEW_SCHEMA, T0_MS, pageview, pipeline_config, write_batches

#: The pageview schema with the key misspelt: no record has the field.
MISSPELT_KEY = {
    **PAGEVIEW_SCHEMA,
    "key": "userid",
    "fields": "userid STRING, ts BIGINT, page_number INT, url STRING",
}


def sampled(config) -> dict[str, tuple[Severity, str, str]]:
    """The input sample's findings by code: severity, message and fix."""
    return {
        f.code: (f.severity, f.message, f.fix)
        for f in diagnose(config)
        if f.code in ("input-rejected", "implausible-event-times")
    }


def test_records_that_fit_the_schema_give_no_finding(tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2, page=3)]])
    assert sampled(pipeline_config(tmp_path)) == {}


def test_an_empty_landing_folder_gives_no_finding(tmp_path):
    (tmp_path / "landing").mkdir()
    assert sampled(pipeline_config(tmp_path)) == {}


def test_a_misspelt_key_sends_every_record_away_and_is_an_error(tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2), pageview("u3", 3)]])
    severity, message, fix = sampled(pipeline_config(tmp_path, schema=MISSPELT_KEY))[
        "input-rejected"
    ]
    assert severity == Severity.ERROR
    landing = tmp_path / "landing"
    assert f"of 3 record(s) sampled from the newest landing files of '{landing}', " in message
    assert "3 would be dead letters (missing_field 3)" in message
    assert "e.g. missing_field: required field 'userid' is missing" in message
    assert "field names, types, key, time and time_unit" in fix


def test_some_bad_records_are_a_warning_counting_them_by_reason(tmp_path):
    quoted_time = json.dumps({"user_id": "u3", "ts": "soon", "page_number": 1, "url": "/"})
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2), quoted_time]])
    severity, message, _ = sampled(pipeline_config(tmp_path))["input-rejected"]
    assert severity == Severity.WARNING
    assert (
        "of 3 record(s) sampled" in message and "1 would be dead letters (wrong_type 1)" in message
    )
    assert (
        "e.g. wrong_type: 'ts' must be a BIGINT" in message and 'got the string "soon"' in message
    )


def test_event_times_in_seconds_read_as_milliseconds_name_the_unit_that_fits(tmp_path):
    seconds = [
        json.dumps({"user_id": "u", "ts": T0_MS // 1000 + i, "page_number": 1, "url": "/"})
        for i in range(3)
    ]
    write_batches(tmp_path / "landing", [seconds])
    severity, message, fix = sampled(pipeline_config(tmp_path))["implausible-event-times"]
    assert severity == Severity.ERROR
    assert "3 of 3 event times read from" in message
    assert "e.g. 1970-01-21T10:53:45Z (schema.time 'ts' in 'ms')" in message
    assert "read in 's' they would be plausible" in message
    assert fix == "set schema.time_unit to 's'"


def old_pageviews(root) -> None:
    """Pageviews of 1995, in milliseconds as declared: a backfill, not a wrong unit."""
    ms_1995 = 788_918_400_000
    records = [{"user_id": "u", "ts": ms_1995 + i, "page_number": 1, "url": "/"} for i in range(3)]
    write_batches(root / "landing", [[json.dumps(r) for r in records]])


def test_event_times_the_config_accepts_as_early_are_plausible(tmp_path):
    old_pageviews(tmp_path)
    config = pipeline_config(tmp_path, validation={"earliest_event_time": "1990-01-01T00:00:00Z"})
    assert sampled(config) == {}


def test_event_times_before_2000_are_no_error_when_the_earliest_time_is_off(tmp_path):
    old_pageviews(tmp_path)
    config = pipeline_config(tmp_path, validation={"earliest_event_time": "off"})
    found = sampled(config).get("implausible-event-times")
    assert found is None or found[0] != Severity.ERROR


def test_run_s_checks_leave_the_sample_out(tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 1)]])
    config = pipeline_config(tmp_path, schema=MISSPELT_KEY)
    assert "input-rejected" in {f.code for f in diagnose(config)}
    assert "input-rejected" not in {f.code for f in diagnose(config, connections=False)}


def test_doctor_exits_2_when_no_sampled_record_would_be_read(tmp_path, capsys):
    path = write(tmp_path, MINIMAL.replace('key = "user_id"', 'key = "userid"'))
    path.write_text(path.read_text().replace("user_id STRING", "userid STRING"))
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2)]])
    assert main(["doctor", str(path)]) == 2
    out = capsys.readouterr().out
    assert "error: input-rejected: of 2 record(s) sampled" in out
    assert "see: docs/failure-modes.md#bad-input" in out
