"""What a run gets when its tasks run in executors on other hosts, and what it keeps in local
mode (no Spark: the settings themselves)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from streamwarden.spark.cluster import MIN_REGISTERED, PYTHON, cluster_defaults
from streamwarden.spark.logs import file_logging_conf

CLUSTER_MASTERS = ["spark://m:7077", "k8s://https://api:6443", "yarn"]


@pytest.mark.parametrize("master", CLUSTER_MASTERS)
def test_a_cluster_run_waits_for_every_executor_before_its_first_batch(master):
    assert cluster_defaults(master) == {MIN_REGISTERED: "1.0"}


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local-cluster[2,1,1024]"])
def test_a_local_run_gets_no_cluster_settings_and_its_python_workers_run_this_interpreter(
    master,
):
    assert cluster_defaults(master) == {PYTHON: sys.executable}


@pytest.mark.parametrize("master", CLUSTER_MASTERS)
def test_cluster_executors_keep_their_own_logs_and_the_driver_logs_to_the_file(master, tmp_path):
    conf = file_logging_conf(tmp_path / "run.log", master)
    assert f"-Dstreamwarden.log={tmp_path / 'run.log'}" in conf["spark.driver.extraJavaOptions"]
    assert "spark.executor.extraJavaOptions" not in conf


def test_local_executors_log_to_the_run_s_file_like_the_driver(tmp_path: Path):
    conf = file_logging_conf(tmp_path / "run.log", "local[2]")
    assert conf["spark.executor.extraJavaOptions"] == conf["spark.driver.extraJavaOptions"]
