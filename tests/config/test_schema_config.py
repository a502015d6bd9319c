"""``[schema]`` in a pipeline config: required, checked at load with the operator's settings
that name fields, and the settings it replaced refused saying what replaces them."""

from __future__ import annotations

import pytest

from streamwarden.config import load_config
from streamwarden.errors import ConfigError

PAYMENTS = """
[schema]
key = "account"
time = "at"
fields = "account STRING, at TIMESTAMP, amount DOUBLE, merchant STRING, geo STRUCT<city: STRING>"
[source]
path = "landing"
[sinks.sessions]
path = "out/sessions"
[sinks.dead_letters]
path = "out/dead"
[checkpoint]
path = "out/checkpoint"
"""


def load(tmp_path, text):
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    return load_config(path)


def refusal(tmp_path, text) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value)


def test_a_config_without_a_schema_is_refused_saying_what_to_declare(tmp_path):
    message = refusal(tmp_path, PAYMENTS[PAYMENTS.index("[source]") :])
    assert "a pipeline needs a [schema] section declaring its records" in message


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ('[fields]\nuser_id = "uid"\n', "fields was removed: declare your records in [schema]"),
        ("[validation]\nmax_pages = 300\n", "validation.max_pages was removed"),
        ("[validation]\nmax_user_id_length = 9\n", "write validation.max_key_length"),
        ("[sessions]\ncollect_urls = true\n", 'urls = "collect_list(url)"'),
        ("[sessions]\nmax_pages = 300\n", "write sessions.max_events"),
    ],
)
def test_a_removed_setting_is_refused_naming_what_replaces_it(tmp_path, extra, says):
    assert says in refusal(tmp_path, PAYMENTS + extra)


def test_aggregates_are_checked_against_the_schema_at_load(tmp_path):
    message = refusal(tmp_path, PAYMENTS + '[sessions.aggregates]\ntotal = "sum(merchant)"\n')
    assert "sum adds numbers, but 'merchant' is STRING" in message
    message = refusal(tmp_path, PAYMENTS + '[sessions.aggregates]\nx = "max(amuont)"\n')
    assert "'amuont' is not a declared field" in message


def test_sessions_carry_the_declared_aggregates(tmp_path):
    config = load(
        tmp_path,
        PAYMENTS
        + '[sessions]\nmax_events = 50\n[sessions.aggregates]\ntotal = "sum(amount)"\n'
        + 'cities = "collect_list(geo.city)"\n',
    )
    assert config.section.max_events == 50
    assert dict(config.section.aggregates) == {
        "total": "sum(amount)",
        "cities": "collect_list(geo.city)",
    }
    assert config.schema.key_name == "account"


PATTERNS = PAYMENTS.replace(
    '[sinks.sessions]\npath = "out/sessions"\n', '[sinks.matches]\npath = "out/matches"\n'
)


def patterns(stages: str, settings: str = "") -> str:
    head, rest = PATTERNS.split("[source]", 1)
    return (
        'operator = "patterns"\n'
        + head
        + "[source]"
        + rest
        + f'[patterns]\nwithin = "10m"\n{settings}\n'
        + stages
    )


STAGES = '[[patterns.stages]]\nname = "big"\ncontiguity = "begin"\nwhere = "amount > 100"\n'


def test_a_pattern_is_keyed_by_the_schema_s_key_and_carries_every_field_by_default(tmp_path):
    config = load(tmp_path, patterns(STAGES))
    assert config.section.key_of(config.schema) == "account"
    assert config.section.fields_of(config.schema) == ["account", "at", "amount", "merchant", "geo"]


def test_a_pattern_naming_an_undeclared_field_is_refused_at_load(tmp_path):
    message = refusal(tmp_path, patterns(STAGES, 'fields = ["amount", "geo.town"]'))
    assert "patterns.fields: 'geo.town' is not a declared field" in message
    previous = STAGES + '[[patterns.stages]]\nname = "other"\nwhere = "amount > 1"\n'
    previous += 'previous = [{ field = "merchnt", op = "!=", stage = "big" }]\n'
    assert "'merchnt' is not a declared field" in refusal(tmp_path, patterns(previous))
