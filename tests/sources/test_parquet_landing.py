"""A landing folder of Parquet files goes through the same validation and sessions."""

from __future__ import annotations

import pytest

from streamwarden.errors import SourceError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
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

    accounting = account(spark, config.sinks.sessions.path, config.sinks.dead_letters.path, 4)
    assert accounting.balanced, accounting.describe()
    assert (accounting.sessions, accounting.dead_letters) == (2, {"page_number_out_of_range": 1})


def test_a_first_file_that_is_not_parquet_is_a_source_error_naming_it(spark, workdir):
    (workdir / "landing").mkdir()
    (workdir / "landing" / "x.parquet").write_text("not parquet")
    config = pipeline_config(workdir, source={"format": "parquet"})
    with pytest.raises(SourceError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert f"cannot read the schema of {str(workdir / 'landing' / 'x.parquet')!r}" in message
    assert "is not a Parquet file" in message and "replace or remove that file" in message
