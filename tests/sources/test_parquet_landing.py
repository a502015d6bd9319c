"""A landing folder of Parquet files goes through the same validation and sessions."""

from __future__ import annotations

import pytest

from streamwarden.errors import SourceError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, read_output
from tests.support import minutes, pipeline_config


def test_parquet_records_are_sessionized_and_bad_ones_dead_lettered(spark, workdir):
    rows = [
        ("a", minutes(0), 1, "/a"),
        ("a", minutes(5), 2, "/b"),
        ("b", minutes(1), 1, "/c"),
        ("c", minutes(2), 0, "/bad-page"),
    ]
    frame = spark.createDataFrame(rows, "user_id string, ts long, page_number int, url string")
    frame.coalesce(1).write.parquet(str(workdir / "staging"))
    (workdir / "landing").mkdir()
    for part in (workdir / "staging").glob("*.parquet"):
        part.rename(workdir / "landing" / part.name)
    config = pipeline_config(workdir, source={"format": "parquet"})

    Pipeline(config, spark).run(once=True, drain=True)

    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 4)
    assert accounting.balanced, accounting.describe()
    assert (accounting.sessions, accounting.dead_letters) == (2, {"out_of_range": 1})


def test_a_first_file_that_is_not_parquet_is_a_source_error_naming_it(spark, workdir):
    (workdir / "landing").mkdir()
    (workdir / "landing" / "x.parquet").write_text("not parquet")
    config = pipeline_config(workdir, source={"format": "parquet"})
    with pytest.raises(SourceError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert f"cannot read the schema of {str(workdir / 'landing' / 'x.parquet')!r}" in message
    assert "is not a Parquet file" in message and "replace or remove that file" in message


def test_parquet_strings_that_are_not_utf8_keep_their_bytes_and_are_never_merged(spark, workdir):
    """Two user ids that differ only in bytes that are not UTF-8 are not one user (Spark's
    ``to_json`` would print both as ``u\ufffd1``): each row is an ``invalid_utf8`` dead letter
    whose ``raw`` holds the row with the column's exact bytes, in base64, as a JSON line with
    such bytes is. A binary column, whatever its bytes, is base64 in ``raw`` and no problem."""
    import base64
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = pa.array([b"u\xff1", b"u\xfe1", b"ok", b"ok"], type=pa.binary()).view(pa.string())
    table = pa.table(
        {
            "user_id": ids,
            "ts": pa.array([minutes(0), minutes(1), minutes(2), minutes(3)]),
            "page_number": pa.array([1, 1, 1, 2]),
            "url": pa.array(['/say-"hi"\\', "/b", "/c", "/d"]),
            "blob": pa.array([b"\xff\x00", b"\xfe", b"\xff", b"ok"], type=pa.binary()),
        }
    )
    (workdir / "landing").mkdir()
    pq.write_table(table, workdir / "landing" / "rows.parquet")
    config = pipeline_config(workdir, source={"format": "parquet"})

    Pipeline(config, spark).run(once=True, drain=True)

    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 4)
    assert accounting.balanced, accounting.describe()
    assert (accounting.events_in_sessions, accounting.dead_letters) == (2, {"invalid_utf8": 2})
    dead = read_output(spark, config.sinks["dead_letters"].path).collect()
    raws = sorted(base64.b64decode(d.raw) for d in dead)
    assert [r[: r.index(b'","ts"')] for r in raws] == [b'{"user_id":"u\xfe1', b'{"user_id":"u\xff1']
    assert b'"url":"/say-\\"hi\\"\\\\"' in raws[1]  # the other strings escaped as JSON
    assert json.loads(raws[0].replace(b"\xfe", b"?"))["blob"] == "/g=="  # binary: base64
    assert all(d.key is None for d in dead)  # no key made of replaced bytes
