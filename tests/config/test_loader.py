"""Config files are validated at load time with messages that say what to fix."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from streamwarden.config import load_config
from streamwarden.errors import ConfigError

#: The smallest pipeline config: pageview records (a [schema] is required) into sessions.
SCHEMA = """
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
"""

MINIMAL = (
    SCHEMA
    + """
[source]
path = "landing"
[sinks.sessions]
path = "out/sessions"
[sinks.dead_letters]
path = "out/dead"
[checkpoint]
path = "out/checkpoint"
"""
)


def write(tmp_path, text, name="pipeline.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_minimal_config_gets_the_documented_defaults(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.schema.time_unit == "ms"
    assert config.section.gap == timedelta(minutes=30)
    assert config.section.allowed_lateness == timedelta(0)
    assert config.section.max_events == 10_000
    assert config.section.max_session_bytes == 4_000_000
    assert config.section.aggregates == {}
    validation = config.validation
    assert (validation.max_key_length, validation.max_record_bytes) == (256, 64 * 1024)
    assert validation.earliest_event_time == datetime(2000, 1, 1, tzinfo=UTC)
    assert validation.max_dead_letter_share == 0.5
    assert validation.dead_letter_share_min_records == 100


def test_relative_paths_are_resolved_against_the_config_folder(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.source.path == tmp_path / "landing"
    assert config.checkpoint.path == tmp_path / "out" / "checkpoint"


def test_durations_and_sizes_are_read_in_human_units(tmp_path):
    text = (
        MINIMAL
        + '[sessions]\ngap = "1h30m"\nallowed_lateness = "90s"\nmax_session_bytes = "2MiB"\n'
    )
    config = load_config(write(tmp_path, text))
    assert config.section.gap == timedelta(minutes=90)
    assert config.section.allowed_lateness == timedelta(seconds=90)
    assert config.section.max_session_bytes == 2 * 1024 * 1024


@pytest.mark.parametrize(
    ("written", "size"),
    [
        ("100", 100),
        ("4MB", 4_000_000),  # SI units are decimal
        ("64KiB", 64 * 1024),  # IEC units are binary
        ("64k", 64 * 1024),  # as Spark and the JVM write sizes: binary
        ("2m", 2 * 1024 * 1024),
        ("1.5 kb", 1500),
    ],
)
def test_every_size_setting_reads_the_same_units(tmp_path, written, size):
    text = MINIMAL + f'[sessions]\nmax_session_bytes = "{written}"\n'
    text += f'[monitoring]\nprogress_log_max_size = "{written}"\n' if size >= 4096 else ""
    config = load_config(write(tmp_path, text))
    assert config.section.max_session_bytes == size
    if size >= 4096:
        assert config.monitoring.progress_log_max_size == size


def test_a_value_out_of_range_is_shown_as_written_and_as_read(tmp_path):
    text = MINIMAL + '[monitoring]\nprogress_log_max_size = "1k"\n'
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert "progress_log_max_size" in str(caught.value)
    assert "greater than or equal to 4096 (got '1k', read as 1024)" in str(caught.value)


def test_durations_read_min_as_minutes(tmp_path):
    config = load_config(write(tmp_path, MINIMAL + '[sessions]\ngap = "5min"\n'))
    assert config.section.gap == timedelta(minutes=5)


@pytest.mark.parametrize("off", ['"off"', '"OFF"'])
def test_settings_that_can_be_turned_off_are_turned_off_with_off(tmp_path, off):
    text = MINIMAL + (
        f"[validation]\nmax_future_skew = {off}\n"
        f"[sessions]\nidle_timeout = {off}\nslow_key_threshold = {off}\n"
        f"[monitoring]\nprometheus_port = {off}\nslow_batch_threshold = {off}\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.validation.max_future_skew is None
    assert config.section.idle_timeout is None and config.section.slow_key_threshold is None
    assert config.monitoring.prometheus_port is None
    assert config.monitoring.slow_batch_threshold is None


@pytest.mark.parametrize("off", ['"off"', '"OFF"'])
def test_the_earliest_event_time_is_turned_off_like_the_other_settings(tmp_path, off):
    text = MINIMAL + f"[validation]\nearliest_event_time = {off}\n"
    assert load_config(write(tmp_path, text)).validation.earliest_event_time is None


def test_a_setting_left_out_keeps_its_default_rather_than_turning_off(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.section.idle_timeout == timedelta(minutes=5)
    assert config.monitoring.prometheus_port == 0  # a free port: the endpoint is on


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ('[sessions]\nmax_events = "300"\n', "sessions.max_events"),
        ('[monitoring]\nenabled = "no"\n', "monitoring.enabled"),
        ('[spark]\nshuffle_partitions = "4"\n', "spark.shuffle_partitions"),
        ("[validation]\nmax_key_length = 3.0\n", "validation.max_key_length"),
        ('[validation]\nmax_dead_letter_share = "1%"\n', "validation.max_dead_letter_share"),
        ("[monitoring]\nprometheus_port = false\n", "monitoring.prometheus_port"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_not_converted(tmp_path, extra, named):
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load_config(write(tmp_path, MINIMAL + extra))


def test_spark_settings_may_be_numbers_or_booleans_and_reach_spark_as_text(tmp_path):
    text = (
        MINIMAL + '[spark.conf]\n"spark.sql.shuffle.partitions" = 4\n"spark.ui.enabled" = false\n'
    )
    conf = load_config(write(tmp_path, text)).spark.conf
    assert conf == {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}


def test_an_unquoted_spark_setting_name_is_refused_saying_to_quote_it(tmp_path):
    text = MINIMAL + "[spark.conf]\nspark.sql.shuffle.partitions = 4\n"
    with pytest.raises(ConfigError, match="quote the whole setting name"):
        load_config(write(tmp_path, text))


def test_keep_payload_which_never_did_anything_is_refused_as_unknown(tmp_path):
    with pytest.raises(ConfigError, match=r"validation\.keep_payload: unknown setting"):
        load_config(write(tmp_path, MINIMAL + "[validation]\nkeep_payload = true\n"))


def test_yaml_configs_are_accepted(tmp_path):
    text = (
        "schema: {key: user_id, time: ts, fields: 'user_id STRING, ts BIGINT'}\n"
        "source: {path: landing}\n"
        "sinks: {sessions: {path: s}, dead_letters: {path: d}}\n"
        "checkpoint: {path: c}\nsessions: {gap: 10m}\n"
    )
    assert load_config(write(tmp_path, text, "p.yaml")).section.gap == timedelta(minutes=10)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ('[sessions]\ngapp = "30m"\n', "sessions.gapp: unknown setting"),
        ('[sessions]\ngap = "0s"\n', "sessions.gap must be > 0"),
        ('[sessions]\ngap = "soon"\n', "expected a duration such as '30m'"),
        ("[spark]\nshuffle_partitions = 0\n", "spark.shuffle_partitions"),
        ('[validation]\nmax_key_length = "many"\n', "validation.max_key_length"),
        ("[validation]\nmax_dead_letter_share = 0\n", "validation.max_dead_letter_share"),
        ("[sessions]\nmax_events = 0\n", "sessions.max_events"),
        (
            '[validation]\nearliest_event_time = "2000-01-01T00:00:00"\n',
            "'2000-01-01T00:00:00' has no zone; add one",
        ),
        (
            '[validation]\nearliest_event_time = "yesterday"\n',
            "'yesterday' is not an ISO-8601 time such as 2000-01-01T00:00:00Z, nor 'off'",
        ),
        ("[spark]\ntrigger_interval = -5\n", "spark.trigger_interval: a duration cannot be"),
        ("[validation]\nmax_future_skew = -60\n", "validation.max_future_skew: a duration cannot"),
        ("[sessions]\ngap = inf\n", "sessions.gap: duration inf is too large"),
        ('[sessions]\ngap = "99999999999d"\n', "duration '99999999999d' is too large"),
        ('[spark]\nmaster = "banana"\n', "spark.master 'banana' is not a Spark master"),
        ('[spark]\nmaster = "local[0]"\n', "runs no task threads"),
        ('[spark.conf]\n"spark.driver.memory" = "lots"\n', "'spark.driver.memory' = 'lots'"),
        (
            '[spark.conf]\n"spark.sql.streaming.stateStore.rocksdb.maxMemoryUsageMB" = "256MB"\n',
            "maxMemoryUsageMB' = '256MB': expected a whole number",
        ),
    ],
)
def test_bad_settings_are_rejected_naming_the_setting(tmp_path, extra, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, MINIMAL + extra))
    assert expected in str(caught.value)


def test_an_unsupported_source_format_is_rejected(tmp_path):
    text = MINIMAL.replace('path = "landing"', 'path = "landing"\nformat = "csv"')
    with pytest.raises(ConfigError, match=r"source\.format"):
        load_config(write(tmp_path, text))


def test_a_missing_section_is_reported_as_required(tmp_path):
    with pytest.raises(ConfigError, match="checkpoint: required setting is missing"):
        load_config(write(tmp_path, MINIMAL.replace('[checkpoint]\npath = "out/checkpoint"\n', "")))


def test_a_missing_file_says_which_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_invalid_toml_is_reported_with_the_parser_message(tmp_path):
    with pytest.raises(ConfigError, match="is not valid toml"):
        load_config(write(tmp_path, "[source\npath=1"))


def test_a_config_file_that_is_not_utf8_is_rejected_saying_so(tmp_path):
    path = tmp_path / "pipeline.toml"
    path.write_bytes(MINIMAL.encode() + b'name = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        load_config(path)


def test_a_bad_value_is_shown_once(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, MINIMAL + "[sessions]\ngap = true\n"))
    assert str(caught.value).count("got True") == 1
