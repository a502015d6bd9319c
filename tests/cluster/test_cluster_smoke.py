"""The short version of the cluster suite, in the default test run: a small sessions pipeline
submitted to a real two-worker standalone cluster (``streamwarden submit --master spark://...``)
writes exactly what the same config writes locally (run on the tests' local session), with its
state partitions on both executors. The long suite (``make cluster``) adds patterns, a killed
executor and the monitoring commands."""

from __future__ import annotations

from dataclasses import replace

from streamwarden.config import load_config
from streamwarden.pipeline import Pipeline
from tests.cluster.support import (
    SESSIONS,
    TRAFFIC,
    events,
    pipeline,
    rows,
    run,
    state_task_executors,
    traffic,
)

#: Two files (two batches) of 150 users: enough for sessions, late and malformed records.
SMALL = replace(TRAFFIC, events=800, files=2, scanners=0)


def test_a_small_sessions_pipeline_on_the_cluster_writes_the_local_output(
    tmp_path_factory, cluster, spark
):
    landing = traffic(tmp_path_factory.mktemp("smoke-traffic") / "landing", SMALL)
    local = tmp_path_factory.mktemp("smoke-local") / "sessions"
    local_config = pipeline(local, SESSIONS, "smoke-local", landing)
    Pipeline(load_config(local_config), spark).run(once=True, drain=True)
    remote = tmp_path_factory.mktemp("smoke-cluster") / "sessions"
    config = pipeline(remote, SESSIONS, "smoke-cluster", landing)

    run("submit", config, "--once", "--drain", "--master", cluster.master_url)

    local_sessions = rows(local / "sessions")
    assert len(local_sessions) > 20  # the input made sessions at all
    assert rows(remote / "sessions") == local_sessions
    assert rows(remote / "dead_letters") == rows(local / "dead_letters")
    assert set(state_task_executors(events(remote))) == {"0", "1"}  # never "driver"
