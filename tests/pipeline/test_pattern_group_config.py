"""A group pattern declared in the pipeline config (``group = [...]``) finds the same matches,
run as a pipeline on real Spark, as the DSL pattern it stands for, and Flink's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pyspark.sql import functions as F

from streamwarden.operators.patterns import Pattern
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from streamwarden.testing import PatternTester
from streamwarden.testing.pattern_tester import matched_names
from tests.support import pageview, pattern_pipeline_config, write_batches

pytestmark = pytest.mark.spark

#: GroupITCase.testGroupFollowedByOptional: ``c (a b)? d``.
URLS = ["c", "a1", "a2", "b", "d"]
FLINK = [["c", "a1", "b", "d"], ["c", "d"]]


def test_a_config_group_matches_like_the_dsl_group(spark, tmp_path):
    patterns = {
        "within": "30m",
        "fields": ["url"],
        "stages": [
            {"name": "start", "contiguity": "begin", "where": "url = 'c'"},
            {
                "name": "middle",
                "group": [
                    {"name": "middle1", "contiguity": "begin", "where": "url LIKE 'a%'"},
                    {"name": "middle2", "where": "url LIKE 'b%'"},
                ],
                "optional": True,
            },
            {"name": "end", "where": "url = 'd'"},
        ],
    }
    write_batches(tmp_path / "landing", [[pageview("u", i, url=url) for i, url in enumerate(URLS)]])
    Pipeline(pattern_pipeline_config(tmp_path, patterns), spark).run(once=True, drain=True)
    rows = read_output(spark, tmp_path / "matches").collect()
    from_config = sorted([e.url for e in r.events] for r in rows)

    url = F.col("url")
    group = (
        Pattern.begin("middle1")
        .where(url.startswith("a"))
        .followed_by("middle2")
        .where(url.startswith("b"))
    )
    dsl = (
        Pattern.begin("start")
        .where(url == "c")
        .followed_by(group)
        .optional()
        .followed_by("end")
        .where(url == "d")
        .within(timedelta(minutes=30))
    )
    events = [{"key": "u", "ts": (i + 1) * 60_000, "url": u} for i, u in enumerate(URLS)]
    from_dsl = sorted(matched_names(PatternTester(spark, dsl, fields=("url",)).run(events)))
    assert from_config == from_dsl == FLINK
