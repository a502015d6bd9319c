"""The pageviews example: the generator's hostile records each have exactly the one fault they
name under ``examples/pageviews.toml``, and the schema the demos build in code is the
example's."""

from __future__ import annotations

from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.local.generator import TrafficSpec, generate_traffic
from tests.local.example_records import Reference, example

SPEC = TrafficSpec(users=50, events=3000, rate_per_second=0.1, malformed_fraction=0.2, files=4)


def test_each_record_has_exactly_the_faults_the_summary_says(tmp_path):
    summary = generate_traffic(SPEC, tmp_path)
    reference = Reference(example("pageviews"))
    reasons = {(h.file, h.line): h.reason.value for h in summary.hostile}
    for path in summary.files:
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            expected = reasons.get((path.name, number))
            assert reference.faults(line) == ({expected} if expected else set()), line
    assert set(reasons.values()) == {
        "malformed_json",
        "missing_field",
        "wrong_type",
        "invalid_timestamp",
        "out_of_range",
        "invalid_key",
    }
    assert len(summary.hostile) == sum(summary.malformed.values())


def test_the_schema_in_code_is_the_example_s():
    config = example("pageviews")
    assert config["schema"] == PAGEVIEW_SCHEMA
    assert config["sessions"]["aggregates"] == PAGEVIEW_AGGREGATES
    for name in ("patterns", "kafka", "delta", "history", "history_delta"):
        assert example(name)["schema"] == PAGEVIEW_SCHEMA, name
