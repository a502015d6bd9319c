"""The landing guard's rules, without Spark: which files it moves aside, why, and what it
leaves alone."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamwarden.errors import ConfigError
from streamwarden.sources.landing_guard import (
    QUARANTINE,
    LandingGuard,
    bad_files,
    parquet_schema_of,
    unreadable_name,
)
from tests.support import pipeline_config


@pytest.mark.parametrize("name", ["a*.jsonl", "a?.jsonl", "a[1].jsonl", "a{b}.jsonl", "a:b.jsonl"])
def test_a_name_spark_cannot_read_once_is_unreadable(name):
    assert unreadable_name(name) is not None


def test_an_ordinary_name_is_readable():
    assert unreadable_name("events-2026-11-24T03-00-00Z_part 1.jsonl") is None


def test_only_files_the_pattern_selects_are_checked(tmp_path):
    (tmp_path / "x[1].txt").write_text("{}\n")
    (tmp_path / ".x[2].jsonl.tmp").write_text("{}\n")  # a producer's temporary name
    assert LandingGuard(tmp_path, "*.jsonl").sweep() == []
    assert (tmp_path / "x[1].txt").exists()


def test_each_file_is_checked_once_and_a_good_file_stays(tmp_path):
    (tmp_path / "good.jsonl.gz").write_bytes(gzip.compress(b"{}\n{}\n"))
    guard = LandingGuard(tmp_path, "{*.jsonl,*.jsonl.gz}")
    assert guard.sweep() == [] and guard.sweep() == []
    assert (tmp_path / "good.jsonl.gz").exists()


def test_a_second_bad_file_of_the_same_name_is_kept_beside_the_first(tmp_path):
    guard = LandingGuard(tmp_path, "*.jsonl")
    for _ in range(2):
        (tmp_path / "a:b.jsonl").write_text("{}\n")
        guard = LandingGuard(tmp_path, "*.jsonl")
        guard.sweep()
    assert sorted(p.name for p in (tmp_path / QUARANTINE).iterdir()) == [
        "a:b.jsonl",
        "a:b.jsonl.1",
        "bad_files.jsonl",
    ]
    assert [b.records for b in bad_files(tmp_path)] == [1, 1]


def _parquet(path, table):
    pq.write_table(table, path)


def test_a_file_that_is_not_parquet_in_a_parquet_folder_is_moved_aside(tmp_path):
    _parquet(tmp_path / "a.parquet", pa.table({"user_id": ["u"], "ts": [1]}))
    (tmp_path / "b.parquet").write_text("user_id,ts\nu,1\n")
    schema = parquet_schema_of(tmp_path, "*.parquet")
    (bad,) = LandingGuard(tmp_path, "*.parquet", schema).sweep()
    assert (bad.name, bad.reason) == ("b.parquet", "not_parquet")
    assert (tmp_path / "a.parquet").exists()


def test_parquet_with_other_column_types_is_moved_aside_naming_the_column(tmp_path):
    _parquet(tmp_path / "a.parquet", pa.table({"user_id": ["u"], "ts": [1]}))
    _parquet(tmp_path / "b.parquet", pa.table({"user_id": ["u"], "ts": ["1"]}))
    schema = parquet_schema_of(tmp_path, "*.parquet")
    (bad,) = LandingGuard(tmp_path, "*.parquet", schema).sweep()
    assert bad.reason == "parquet_schema" and "ts: string" in bad.detail and bad.records == 1


def test_a_glob_character_in_the_landing_folder_or_a_bad_pattern_is_refused_at_load(tmp_path):
    with pytest.raises(ConfigError, match="glob character"):
        pipeline_config(tmp_path, source={"path": str(tmp_path / "land[1]")})
    with pytest.raises(ConfigError, match=r"source\.files"):
        pipeline_config(tmp_path, source={"files": "sub/*.jsonl"})
