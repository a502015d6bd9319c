"""Pipelines submitted to a real two-worker standalone cluster, as a user submits them
(``streamwarden submit CONFIG --master spark://...``), give exactly the output of the same
config run locally on the same input: with their state partitions on both executors, with an
executor JVM killed mid-run, and with ``status``, ``inspect`` and the Prometheus endpoint
working on the cluster run. Long (a few minutes per run on a loaded machine): ``make cluster``
or ``make soak``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import urllib.request

import pytest

from streamwarden.monitoring.progress_log import progress_dir, read_status
from tests.cluster.support import (
    PATTERNS,
    SESSIONS,
    app_id,
    command,
    environment,
    events,
    pipeline,
    rows,
    run,
    state_task_executors,
    traffic,
    wait_until,
)

pytestmark = pytest.mark.soak


@pytest.fixture(scope="module")
def landing(tmp_path_factory):
    return traffic(tmp_path_factory.mktemp("traffic") / "landing")


@pytest.fixture(scope="module")
def local_sessions(tmp_path_factory, landing):
    root = tmp_path_factory.mktemp("local") / "sessions"
    run("run", pipeline(root, SESSIONS, "local-sessions", landing), "--once", "--drain")
    return root


@pytest.fixture(scope="module")
def cluster_sessions(tmp_path_factory, landing, cluster):
    root = tmp_path_factory.mktemp("cluster") / "sessions"
    config = pipeline(root, SESSIONS, "cluster-sessions", landing)
    run("submit", config, "--once", "--drain", "--master", cluster.master_url)
    return root


def test_sessions_on_the_cluster_are_the_local_run_s_row_for_row(local_sessions, cluster_sessions):
    assert rows(cluster_sessions / "sessions") == rows(local_sessions / "sessions")
    assert rows(cluster_sessions / "dead_letters") == rows(local_sessions / "dead_letters")
    assert len(rows(local_sessions / "sessions")) > 100  # the input made sessions at all


def test_the_state_partitions_ran_on_both_executors(cluster_sessions):
    by_executor = state_task_executors(events(cluster_sessions))
    assert set(by_executor) == {"0", "1"}, by_executor  # never "driver": no local task


def test_the_executors_run_no_python_only_the_engine_s_jvm_code(cluster_sessions):
    plans = [
        e.get("physicalPlanDescription", "")
        for e in events(cluster_sessions)
        if e["Event"].endswith("SparkListenerSQLExecutionStart")
    ]
    assert any("TransformWithState" in p for p in plans)  # the plans are there to read
    assert not [p for p in plans if re.search(r"EvalPython|InPandas|InArrow|PythonUDF", p)]


def test_slow_keys_are_logged_by_the_executors_into_their_own_logs(cluster_sessions, cluster):
    app = app_id(cluster_sessions)
    logs = list(cluster.folder.glob(f"work-*/{app}/*/stderr"))
    assert len(logs) == 2
    assert any('"event":"slow_key"' in log.read_text() for log in logs)


def test_patterns_on_the_cluster_are_the_local_run_s_by_match_id(
    tmp_path_factory, landing, cluster
):
    local = tmp_path_factory.mktemp("local") / "patterns"
    run("run", pipeline(local, PATTERNS, "local-patterns", landing), "--once", "--drain")
    remote = tmp_path_factory.mktemp("cluster") / "patterns"
    config = pipeline(remote, PATTERNS, "cluster-patterns", landing)
    run("submit", config, "--once", "--drain", "--master", cluster.master_url)

    local_matches = rows(local / "matches")
    assert len(local_matches) > 5  # the actors' scans matched
    assert rows(remote / "matches") == local_matches
    assert rows(remote / "timeouts") == rows(local / "timeouts")
    assert rows(remote / "dead_letters") == rows(local / "dead_letters")
    assert set(state_task_executors(events(remote))) == {"0", "1"}


def test_an_executor_killed_mid_run_changes_nothing_in_the_output(
    tmp_path_factory, landing, cluster, local_sessions
):
    root = tmp_path_factory.mktemp("killed") / "sessions"
    config = pipeline(root, SESSIONS, "killed-sessions", landing)
    submit = command("submit", config, "--once", "--drain", "--master", cluster.master_url)
    process = subprocess.Popen(
        submit, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment()
    )
    try:
        wait_until((root / "checkpoint" / "commits" / "1").exists, process, "batch 1")
        app = wait_until(lambda: _running_app(cluster, "killed-sessions"), process, "the app")
        victim = wait_until(lambda: cluster.executors(app), process, "its executors")[0]
        os.kill(victim.pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=1200)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr

    log = events(root)
    removed = {e["Executor ID"] for e in log if e["Event"] == "SparkListenerExecutorRemoved"}
    assert victim.executor_id in removed  # Spark saw the loss while the run went on
    assert len(state_task_executors(log)) == 3  # the worker's new executor took over
    assert rows(root / "sessions") == rows(local_sessions / "sessions")
    assert rows(root / "dead_letters") == rows(local_sessions / "dead_letters")


def test_status_inspect_and_prometheus_work_on_the_cluster_run(tmp_path_factory, landing, cluster):
    root = tmp_path_factory.mktemp("watched") / "sessions"
    config = pipeline(root, SESSIONS, "watched-sessions", landing)
    process = subprocess.Popen(
        command("submit", config, "--master", cluster.master_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment(),
    )
    folder = progress_dir(root / "checkpoint")
    try:
        published = wait_until(
            lambda: (s := read_status(folder)) and s.get("last_batch", -1) >= 1 and s,
            process,
            "two batches",
        )
        status = run("status", config, "--threads").stdout
        assert f"UI {published['ui_url']}" in status and "127.0.0.1" in published["ui_url"]
        assert "threads of executor 0:" in status and "threads of executor 1:" in status
        with urllib.request.urlopen(published["prometheus_url"], timeout=30) as response:
            metrics = response.read().decode()
        assert "streamwarden_state_rows{" in metrics
        assert "streamwarden_state_partition_rows{" in metrics  # per partition, from executors
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=600)
    assert process.returncode == 0
    inspected = run("inspect", root / "checkpoint").stdout
    assert "state partitions 4" in inspected, inspected


def _running_app(cluster, name: str) -> str | None:
    for app in cluster.state().get("activeapps", []):
        if app.get("name") == f"streamwarden-{name}":
            return str(app["id"])
    return None
