"""The traffic generator is deterministic and reports exactly what it wrote."""

from __future__ import annotations

import pytest

from streamwarden.errors import UsageError
from streamwarden.local.generator import TrafficSpec, generate_traffic

SPEC = TrafficSpec(
    users=50,
    events=2000,
    rate_per_second=0.1,
    malformed_fraction=0.05,
    late_fraction=0.05,
    events_per_file=300,
)


def test_the_same_spec_and_seed_give_byte_identical_files(tmp_path):
    a = generate_traffic(SPEC, tmp_path / "a")
    b = generate_traffic(SPEC, tmp_path / "b")
    assert [p.read_bytes() for p in a.files] == [p.read_bytes() for p in b.files]


def test_the_summary_counts_every_line_written(tmp_path):
    summary = generate_traffic(SPEC, tmp_path)
    lines = sum(len(p.read_text().splitlines()) for p in summary.files)
    assert lines == summary.records == 2000
    assert summary.events + sum(summary.malformed.values()) == summary.records
    assert summary.malformed and summary.late


def test_files_are_ordered_by_modification_time(tmp_path):
    files = generate_traffic(SPEC, tmp_path).files
    mtimes = [p.stat().st_mtime for p in files]
    assert mtimes == sorted(mtimes) and len(set(mtimes)) == len(mtimes)


def test_a_rate_too_high_for_the_users_is_refused_with_advice():
    with pytest.raises(UsageError, match="lower the rate or add users"):
        _ = TrafficSpec(users=10, rate_per_second=100.0).mean_idle


@pytest.mark.parametrize(("records", "files"), [(2000, 7), (2000, 1), (5, 9)])
def test_a_file_count_splits_the_records_into_that_many_files_as_evenly_as_possible(
    tmp_path, records, files
):
    spec = TrafficSpec(users=50, events=records, rate_per_second=0.1, files=files)
    summary = generate_traffic(spec, tmp_path)
    sizes = [len(p.read_text().splitlines()) for p in summary.files]
    assert len(sizes) == min(files, records)
    assert sum(sizes) == summary.records == records
    assert max(sizes) - min(sizes) <= 1


def test_a_file_count_counts_the_scans_too(tmp_path):
    spec = TrafficSpec(users=50, events=3000, rate_per_second=0.1, scanners=4, files=3)
    summary = generate_traffic(spec, tmp_path)
    assert summary.scans > 0 and summary.records > 3000
    assert len(summary.files) == 3
