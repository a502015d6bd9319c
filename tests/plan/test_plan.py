"""One plan per run: the parts a config selects are looked up once, and a run checks each of
them once (before Spark starts) and builds its Spark session once, from the plan."""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.operators.sessions.operator import SessionsOperator
from streamwarden.pipeline import Pipeline
from streamwarden.plan import PipelinePlan
from streamwarden.sinks.delta import DeltaBatchSink
from streamwarden.sinks.parquet import ParquetBatchSink
from streamwarden.sources.files import FilesSource
from tests.config.test_loader import MINIMAL, write
from tests.support import pageview, write_batches


def test_the_plan_holds_the_parts_the_config_selects(tmp_path):
    plan = PipelinePlan.of(load_config(write(tmp_path, MINIMAL)))
    assert isinstance(plan.operator, SessionsOperator)
    assert isinstance(plan.source, FilesSource)
    assert plan.sinks == {"sessions": ParquetBatchSink, "dead_letters": ParquetBatchSink}
    assert plan.history is None
    assert plan.jars == () and plan.spark_conf() == {}
    assert [what for what, _ in plan.checks()] == ["source", "sink sessions", "sink dead_letters"]


def test_the_spark_settings_are_the_sinks_needs_then_the_configs_own(tmp_path):
    text = MINIMAL.replace("[sinks.sessions]\n", '[sinks.sessions]\nkind = "delta"\n')
    text += '[spark.conf]\n"spark.sql.catalog.spark_catalog" = "mine"\n'
    plan = PipelinePlan.of(load_config(write(tmp_path, text)))
    assert plan.sinks["sessions"] is DeltaBatchSink
    conf = plan.spark_conf()
    assert "DeltaSparkSessionExtension" in conf["spark.sql.extensions"]
    assert conf["spark.sql.catalog.spark_catalog"] == "mine"  # [spark.conf] wins


def test_a_pipeline_made_from_a_config_makes_its_plan_and_one_given_a_plan_keeps_it(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    plan = PipelinePlan.of(config)
    assert Pipeline(plan).plan is plan
    made = Pipeline(config).plan
    assert made.config is config and made.sinks == plan.sinks


@pytest.mark.spark
def test_a_run_checks_each_part_once_before_it_starts(spark, tmp_path, monkeypatch):
    calls: list[str] = []
    real = FilesSource.check
    monkeypatch.setattr(
        FilesSource, "check", lambda self, *args: (calls.append("source"), real(self, *args))[1]
    )
    real_sink = ParquetBatchSink.check
    monkeypatch.setattr(
        ParquetBatchSink,
        "check",
        staticmethod(lambda name, *args: (calls.append(name), real_sink(name, *args))[1]),
    )
    write_batches(tmp_path / "landing", [[pageview("a", 0), pageview("a", 1)]])
    config = write(tmp_path, MINIMAL)
    assert main(["run", str(config), "--once", "--drain", "--skip-doctor"]) == 0
    assert sorted(calls) == ["dead_letters", "sessions", "source"]


@pytest.mark.spark
def test_a_run_on_an_existing_checkpoint_checks_its_ownership_once(spark, tmp_path, monkeypatch):
    from streamwarden.pipeline import ownership, runner

    write_batches(tmp_path / "landing", [[pageview("a", 0)]])
    config = write(tmp_path, MINIMAL)
    assert main(["run", str(config), "--once", "--skip-doctor"]) == 0
    calls: list[str] = []
    real = ownership.check_ownership

    def counted(config):
        calls.append(config.name)
        real(config)

    monkeypatch.setattr(ownership, "check_ownership", counted)
    monkeypatch.setattr(runner, "check_ownership", counted)
    write_batches(tmp_path / "landing", [[pageview("b", 5)]], first_index=1)
    assert main(["run", str(config), "--once", "--skip-doctor"]) == 0
    assert calls == ["sessions"]
