"""``streamwarden demo --example NAME``: the example's own config, its folders moved into the
demo's; refused with a pageview variant or option, before anything is written. (The run itself
needs Spark: the lead's end-to-end tests.)"""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.local.examples.demo import example_demo_config


@pytest.mark.parametrize("name", ["payments", "logins"])
def test_the_demo_runs_the_example_s_config_in_its_own_folder(tmp_path, name):
    config = example_demo_config(name, tmp_path)
    assert config.source.path == tmp_path / "landing"
    assert config.checkpoint.path == tmp_path / "checkpoint"
    assert {s.path for s in config.sinks.values()} == {tmp_path / n for n in config.sinks}
    assert config.spark.shuffle_partitions == 2
    assert config.schema.key == {"payments": "account", "logins": "user"}[name]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["patterns", "--example", "payments"], "leave out 'patterns'"),
        (["--example", "logins", "--events", "100"], "--events is for the pageviews"),
    ],
)
def test_a_pageview_variant_or_option_with_another_example_is_a_usage_error(
    tmp_path, args, message, capsys
):
    assert main(["demo", *args, "--out", str(tmp_path / "demo")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()
