"""A pipeline's session builds queries without PySpark's record of Python call sites: around
every Column and DataFrame call that record costs seven round trips to the JVM, and every
start, restart and drain builds a query (bench/start_time.py: a quarter of the round trips,
half the time)."""

from __future__ import annotations

import pytest
from pyspark.errors.utils import is_debugging_enabled

from streamwarden.spark.session import QUERY_BUILDING

pytestmark = pytest.mark.spark


def test_the_session_records_no_python_call_sites(spark):
    [(setting, value)] = QUERY_BUILDING.items()
    assert spark.conf.get(setting) == value == "false"
    assert not is_debugging_enabled()  # what PySpark's wrappers consult before each call
