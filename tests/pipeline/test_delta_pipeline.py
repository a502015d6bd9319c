"""The sessions pipeline writing Delta tables: the sessions table holds the final sessions of
the Parquet path on the same input, row for row; the run's records reconcile from the tables;
each batch that had output is one commit recording the pipeline and the batch id."""

from __future__ import annotations

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import final_sessions, read_output
from streamwarden.sinks import delta_log
from tests.support import pipeline_config

SPEC = TrafficSpec(
    users=80,
    events=1_200,
    rate_per_second=0.2,
    events_per_file=400,
    late_fraction=0.03,
    too_late_fraction=0.005,
    malformed_fraction=0.01,
)
SESSIONS = {"allowed_lateness": "10m"}


def delta_config(root, **sinks):
    return pipeline_config(
        root,
        name="delta-test",
        sessions=SESSIONS,
        sinks={
            "sessions": {"kind": "delta", "path": str(root / "sessions"), **sinks},
            "dead_letters": {"kind": "delta", "path": str(root / "dead_letters")},
        },
    )


def session_rows(frame):
    columns = [c for c in frame.columns if c not in ("batch_id", "session_date")]
    return sorted(tuple(r) for r in frame.select(*sorted(columns)).collect())


def test_the_delta_sessions_table_holds_the_final_sessions_of_the_parquet_path(spark, workdir):
    for root in (workdir / "parquet", workdir / "delta"):
        generate_traffic(SPEC, root / "landing")
    Pipeline(pipeline_config(workdir / "parquet", sessions=SESSIONS), spark).run(
        once=True, drain=True
    )
    config = delta_config(workdir / "delta")
    result = Pipeline(config, spark).run(once=True, drain=True)

    parquet = final_sessions(read_output(spark, workdir / "parquet" / "sessions"))
    table = spark.read.format("delta").load(str(workdir / "delta" / "sessions"))
    assert table.count() == table.select("session_id").distinct().count()  # one row a session
    assert session_rows(table) == session_rows(parquet)
    assert "session_date" in table.columns  # partitioned by session date, the default
    letters = spark.read.format("delta").load(str(workdir / "delta" / "dead_letters"))
    parquet_letters = read_output(spark, workdir / "parquet" / "dead_letters")
    assert sorted(letters.select("raw", "reason").collect()) == sorted(
        parquet_letters.select("raw", "reason").collect()
    )

    accounting = account_run(spark, config, SPEC.events, result.batches)
    assert accounting.balanced, accounting.describe()

    app = config.context.pipeline_id
    for table_name, output in (("sessions", "session_rows"), ("dead_letters", None)):
        commits = delta_log.commits(workdir / "delta" / table_name)
        recorded = [c.transactions[app] for c in commits]
        assert all(c.operation in ("WRITE", "MERGE") for c in commits)
        if output is not None:  # one commit per batch that had sessions, in batch order
            with_rows = [b.batch_id for b in result.batches if b.session_rows > 0]
            assert recorded == with_rows
        assert recorded == sorted(set(recorded))  # no batch twice
