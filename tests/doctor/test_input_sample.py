"""``doctor`` reads a sample of the input with the validation a pipeline runs: a ``[schema]``
that does not fit the records (a misspelt field, event times in another unit, a check or a rule
the data never meets) is a finding before the first run, not a folder of dead letters after it.
The landing folder may hold JSON lines or Parquet; a sample that cannot be read is a warning.
``run``'s own checks leave the sample out. (Kafka topics: ``tests/kafka/test_kafka_doctor.py``.)"""

from __future__ import annotations

import json

import pytest

from streamwarden.cli.doctor import preflight
from streamwarden.cli.main import main
from streamwarden.doctor import Severity, diagnose
from streamwarden.doctor.input_sample import SAMPLE, check_input_sample
from tests.config.test_loader import MINIMAL, write
from tests.support import PAGEVIEW_SCHEMA, T0_MS, pageview, pipeline_config, write_batches

pytestmark = pytest.mark.spark

#: The pageview schema with the key misspelt: no record has the field.
MISSPELT_KEY = {
    **PAGEVIEW_SCHEMA,
    "key": "userid",
    "fields": "userid STRING, ts BIGINT, page_number INT, url STRING",
}
#: What the input sample reports.
SAMPLE_CODES = ("input-rejected", "implausible-event-times", "input-unread")


def sampled(config, spark) -> dict[str, tuple[Severity, str, str]]:
    """The input sample's findings by code: severity, message and fix."""
    findings = check_input_sample(config, spark)
    assert {f.code for f in findings} <= set(SAMPLE_CODES)
    return {f.code: (f.severity, f.message, f.fix) for f in findings}


def test_records_that_fit_the_schema_give_no_finding(spark, tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2, page=3)]])
    assert sampled(pipeline_config(tmp_path), spark) == {}


def test_an_empty_landing_folder_gives_no_finding(spark, tmp_path):
    (tmp_path / "landing").mkdir()
    assert sampled(pipeline_config(tmp_path), spark) == {}


def test_a_misspelt_key_sends_every_record_away_and_is_an_error(spark, tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2), pageview("u3", 3)]])
    severity, message, fix = sampled(pipeline_config(tmp_path, schema=MISSPELT_KEY), spark)[
        "input-rejected"
    ]
    assert severity == Severity.ERROR
    landing = tmp_path / "landing"
    assert f"of 3 record(s) sampled from the newest landing files of '{landing}', " in message
    assert "3 would be dead letters (missing_field 3)" in message
    assert "e.g. missing_field: required field 'userid' is missing" in message
    assert "field names, types, key, time and time_unit" in fix


def test_some_bad_records_are_a_warning_counting_them_by_reason(spark, tmp_path):
    quoted_time = json.dumps({"user_id": "u3", "ts": "soon", "page_number": 1, "url": "/"})
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2), quoted_time]])
    severity, message, _ = sampled(pipeline_config(tmp_path), spark)["input-rejected"]
    assert severity == Severity.WARNING
    assert (
        "of 3 record(s) sampled" in message and "1 would be dead letters (wrong_type 1)" in message
    )
    assert (
        "e.g. wrong_type: 'ts' must be a BIGINT" in message and 'got the string "soon"' in message
    )


def test_a_value_under_a_fields_minimum_is_out_of_range_with_its_detail(spark, tmp_path):
    schema = {
        **PAGEVIEW_SCHEMA,
        "fields": f"{PAGEVIEW_SCHEMA['fields']}, amount DOUBLE",
        "checks": {"amount": {"min": 0}},
    }
    paid = [json.loads(pageview(f"u{i}", i)) | {"amount": 9.5 - 10 * i} for i in range(3)]
    write_batches(tmp_path / "landing", [[json.dumps(r) for r in paid]])
    severity, message, _ = sampled(pipeline_config(tmp_path, schema=schema), spark)[
        "input-rejected"
    ]
    assert severity == Severity.WARNING
    assert "2 would be dead letters (out_of_range 2)" in message
    assert "e.g. out_of_range: 'amount' -" in message and "is below the minimum 0" in message


def test_a_rule_the_records_fail_is_rule_failed_naming_the_rule(spark, tmp_path):
    schema = {**PAGEVIEW_SCHEMA, "rules": [{"name": "known_page", "check": "url LIKE '/p/%'"}]}
    write_batches(tmp_path / "landing", [[pageview("u1", 1, url="/x"), pageview("u2", 2)]])
    severity, message, _ = sampled(pipeline_config(tmp_path, schema=schema), spark)[
        "input-rejected"
    ]
    assert severity == Severity.WARNING
    assert "1 would be dead letters (rule_failed 1)" in message
    assert "e.g. rule_failed: rule 'known_page' failed: url LIKE '/p/%'" in message


def test_the_sample_is_the_newest_records_of_the_newest_files(spark, tmp_path):
    """Older files of good records, each larger than the newest file of bad ones (Spark would
    read the larger files of one read first): the sample is the newest :data:`SAMPLE`
    records, all bad."""
    good = [[pageview(f"u{b}", i, url=f"/{'x' * 40}") for i in range(SAMPLE)] for b in range(3)]
    bad = [[json.dumps({"user_id": "u", "ts": "soon", "page_number": 1})] * SAMPLE]
    write_batches(tmp_path / "landing", [*good, *bad])
    severity, message, _ = sampled(pipeline_config(tmp_path), spark)["input-rejected"]
    assert severity == Severity.ERROR
    assert f"of {SAMPLE} record(s) sampled" in message
    assert f"{SAMPLE} would be dead letters (wrong_type {SAMPLE})" in message


def write_parquet(landing, rows) -> None:
    """One Parquet landing file of pageview rows (user_id, ts, page_number, url)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = ("user_id", "ts", "page_number", "url")
    landing.mkdir(parents=True, exist_ok=True)
    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    pq.write_table(table, landing / "rows.parquet")


def test_parquet_rows_with_a_misspelt_key_are_missing_field(spark, tmp_path):
    write_parquet(tmp_path / "landing", [("u1", T0_MS, 1, "/a"), ("u2", T0_MS + 1, 2, "/b")])
    config = pipeline_config(tmp_path, source={"format": "parquet"}, schema=MISSPELT_KEY)
    severity, message, _ = sampled(config, spark)["input-rejected"]
    assert severity == Severity.ERROR
    assert "of 2 record(s) sampled from the newest landing files of" in message
    assert "2 would be dead letters (missing_field 2)" in message
    assert "e.g. missing_field: required field 'userid' is missing" in message


def test_parquet_rows_that_fit_the_schema_give_no_finding(spark, tmp_path):
    write_parquet(tmp_path / "landing", [("u1", T0_MS, 1, "/a"), ("u2", T0_MS + 1, 2, "/b")])
    assert sampled(pipeline_config(tmp_path, source={"format": "parquet"}), spark) == {}


def test_a_sample_that_cannot_be_read_is_a_warning_saying_why(spark, tmp_path):
    (tmp_path / "landing").mkdir()
    (tmp_path / "landing" / "x.parquet").write_text("not parquet")
    config = pipeline_config(tmp_path, source={"format": "parquet"})
    severity, message, fix = sampled(config, spark)["input-unread"]
    assert severity == Severity.WARNING
    assert message.startswith(
        f"could not read a sample of the newest landing files of '{tmp_path / 'landing'}'"
    )
    assert "cannot read the schema of" in message and "\n" not in message
    assert "then run doctor again" in fix


def test_a_landing_file_spark_fails_to_read_is_a_warning_saying_why(spark, tmp_path):
    import gzip

    (tmp_path / "landing").mkdir()
    whole = gzip.compress("".join(pageview(f"u{i}", i) + "\n" for i in range(50)).encode())
    (tmp_path / "landing" / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    severity, message, _ = sampled(pipeline_config(tmp_path), spark)["input-unread"]
    assert severity == Severity.WARNING
    assert message.startswith("could not read a sample of the newest landing files of ")
    assert "EOFException" in message and "\n" not in message


def test_event_times_in_seconds_read_as_milliseconds_name_the_unit_that_fits(spark, tmp_path):
    seconds = [
        json.dumps({"user_id": "u", "ts": T0_MS // 1000 + i, "page_number": 1, "url": "/"})
        for i in range(3)
    ]
    write_batches(tmp_path / "landing", [seconds])
    severity, message, fix = sampled(pipeline_config(tmp_path), spark)["implausible-event-times"]
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


def test_event_times_the_config_accepts_as_early_are_plausible(spark, tmp_path):
    old_pageviews(tmp_path)
    config = pipeline_config(tmp_path, validation={"earliest_event_time": "1990-01-01T00:00:00Z"})
    assert sampled(config, spark) == {}


def test_event_times_before_2000_are_no_error_when_the_earliest_time_is_off(spark, tmp_path):
    old_pageviews(tmp_path)
    config = pipeline_config(tmp_path, validation={"earliest_event_time": "off"})
    found = sampled(config, spark).get("implausible-event-times")
    assert found is None or found[0] != Severity.ERROR


def test_run_s_checks_leave_the_sample_out(spark, tmp_path, capsys):
    write_batches(tmp_path / "landing", [[pageview("u1", 1)]])
    config = pipeline_config(tmp_path, schema=MISSPELT_KEY)
    assert "input-rejected" in {f.code for f in check_input_sample(config, spark)}
    assert not {f.code for f in diagnose(config)} & set(SAMPLE_CODES)
    preflight(config, tmp_path / "p.toml")  # no error: the sample is not among run's checks
    assert "input-rejected" not in capsys.readouterr().err


def test_doctor_exits_2_when_no_sampled_record_would_be_read(doctor_spark, tmp_path, capsys):
    path = write(tmp_path, MINIMAL.replace('key = "user_id"', 'key = "userid"'))
    path.write_text(path.read_text().replace("user_id STRING", "userid STRING"))
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2)]])
    assert main(["doctor", str(path)]) == 2
    out = capsys.readouterr().out
    assert "error: input-rejected: of 2 record(s) sampled" in out
    assert "see: docs/failure-modes.md#bad-input" in out


def test_doctor_reports_a_check_the_records_fail_without_plan(doctor_spark, tmp_path, capsys):
    path = write(tmp_path, MINIMAL + "[schema.checks.page_number]\nmax = 2\n")
    write_batches(tmp_path / "landing", [[pageview("u1", 1), pageview("u2", 2, page=7)]])
    assert main(["doctor", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning: input-rejected: of 2 record(s) sampled" in out
    assert "(out_of_range 1); e.g. out_of_range: 'page_number' 7 is over the maximum 2" in out
