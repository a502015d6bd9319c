"""Every example config loads, and each generator is built for its example's settings: what
the generators guarantee by construction holds only under those."""

from __future__ import annotations

import pytest

from streamwarden.config import load_config
from streamwarden.local.examples.catalog import EXAMPLES, example_landing
from streamwarden.local.examples.logins import LoginsSpec
from streamwarden.local.examples.payments import PaymentsSpec
from tests.local.example_records import EXAMPLES as FOLDER


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.toml")), ids=lambda p: p.name)
def test_each_example_config_loads(path):
    load_config(path)


def test_the_payments_generator_is_built_for_the_payments_config():
    config = load_config(FOLDER / "payments.toml")
    spec = PaymentsSpec()
    assert config.section.gap == spec.gap
    assert config.section.allowed_lateness == spec.allowed_lateness
    assert config.section.max_out_of_orderness == spec.max_out_of_orderness
    # one file per micro-batch: the late payments are placed by the watermark of each file
    assert config.source.max_files_per_trigger == 1
    assert set(config.section.aggregates) == {
        "total",
        "largest",
        "merchants",
        "first_country",
        "last_country",
        "cities",
    }


def test_the_logins_generator_is_built_for_the_logins_config():
    config = load_config(FOLDER / "logins.toml")
    spec = LoginsSpec()
    assert config.operator == "patterns"
    assert config.section.within == spec.within
    assert config.section.max_out_of_orderness == spec.max_out_of_orderness
    assert [s.name for s in config.section.stages] == ["failure", "success"]


def test_each_example_has_its_own_landing_folder():
    landings = {name: example_landing(name, FOLDER) for name in EXAMPLES}
    assert landings["pageviews"] == FOLDER / "landing"
    assert landings["payments"] == FOLDER / "payments" / "landing"
    assert landings["logins"] == FOLDER / "logins" / "landing"
    for name in EXAMPLES:
        config = load_config(FOLDER / EXAMPLES[name].config)
        several = config.several
        if several is None:
            assert getattr(config.source, "path", None) == landings[name].resolve()
        else:  # each source in a folder of its own name under the example's landing folder
            for source, settings in several.named.items():
                assert getattr(settings, "path", None) == landings[name].resolve() / source
