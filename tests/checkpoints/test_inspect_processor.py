"""``inspect`` on a keyed processor's checkpoint: each declared state with its rows, bytes and
the age of its entries (time since each was written), the guard's own states beside them, and
no leak suspected (every key holding state has its expiry timer)."""

from __future__ import annotations

import pytest

from streamwarden.checkpoints.inspect import inspect_checkpoint
from streamwarden.pipeline import Pipeline
from tests.support import pageview, process_pipeline_config, write_batches

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("processor-inspect")
    users = [f"u{i}" for i in range(6)]
    write_batches(root / "landing", [[pageview(u, i) for i, u in enumerate(users)]])
    config = process_pipeline_config(root)
    Pipeline(config, spark).run(once=True)  # no drain: the counts are held
    return inspect_checkpoint(spark, config.checkpoint.path)


def test_each_declared_state_is_reported_with_its_rows_and_bytes(report):
    (op,) = report.operators
    states = {s.name: s for s in op.states}
    count = states["count"]
    assert count.rows == count.keys == 6 and count.approx_bytes > 0
    assert sum(p.rows for p in count.partitions) == 6
    assert set(states) == {"count", "_sw_timers"}  # and the processor's own timers


def test_a_processor_state_is_aged_by_the_time_since_its_entries_were_written(report):
    count = next(s for s in report.operators[0].states if s.name == "count")
    assert count.age_meaning == "time since the entry was written"
    assert sum(n for _, n in count.age_histogram) == count.rows


def test_no_leak_is_suspected_as_every_key_has_its_expiry_timer(report):
    assert not report.leak_suspected
    assert report.operators[0].timers is not None and report.operators[0].timers.rows == 6
