"""The scale benchmarks' results files (bench/scale/common.py): a long document is written
gzip-compressed, a short one as plain JSON, either is read back, and a rewrite never leaves a
stale twin behind. No Spark, no Flink."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from scale import common


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    return tmp_path


def long_document() -> dict[str, object]:
    return {"results": [{"batches": [{"ms": i} for i in range(common.COMPRESS_ABOVE // 10)]}]}


def test_a_long_document_is_written_compressed_and_read_back(results: Path) -> None:
    document = long_document()
    path = common.save("run", document)
    assert path == results / "run.json.gz"
    assert not (results / "run.json").exists()
    assert json.loads(gzip.decompress(path.read_bytes())) == document
    assert common.load("run") == document


def test_a_short_document_stays_plain_json(results: Path) -> None:
    document = {"results": [{"keys": 10}]}
    assert common.save("run", document) == results / "run.json"
    assert json.loads((results / "run.json").read_text()) == document
    assert common.load("run") == document


def test_the_same_document_gives_the_same_compressed_bytes(results: Path) -> None:
    first = common.save("run", long_document()).read_bytes()
    assert common.save("run", long_document()).read_bytes() == first


def test_a_rewrite_removes_the_other_form(results: Path) -> None:
    common.save("run", long_document())
    common.save("run", {"results": []})
    assert common.results_file("run") == results / "run.json"
    assert not (results / "run.json.gz").exists()
    common.save("run", long_document())
    assert common.results_file("run") == results / "run.json.gz"
    assert not (results / "run.json").exists()


def test_a_missing_results_file(results: Path) -> None:
    assert common.results_file("none") is None
    with pytest.raises(FileNotFoundError):
        common.load("none")


def test_the_committed_raw_results_read_back() -> None:
    """The compressed files in bench/results/ are what the scripts read (--resume, --merge,
    --report-only)."""
    for path in sorted(common.RESULTS.glob("*.json.gz")):
        name = path.name.removesuffix(".json.gz")
        assert common.results_file(name) == path
        assert common.load(name)
