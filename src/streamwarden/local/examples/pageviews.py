"""The pageviews example (``examples/pageviews.toml``): the traffic of
:mod:`streamwarden.local.generator`, and its schema for the pipelines that the demos and tests
build in code (the same as the example's ``[schema]`` and aggregates; a test compares them):
``parse_config({"schema": PAGEVIEW_SCHEMA, "sessions": {"aggregates": PAGEVIEW_AGGREGATES},
...})``.
"""

from __future__ import annotations

from typing import Any

from streamwarden.local.generator import TrafficSpec, TrafficSummary, generate_traffic

__all__ = [
    "PAGEVIEW_AGGREGATES",
    "PAGEVIEW_SCHEMA",
    "TrafficSpec",
    "TrafficSummary",
    "generate_traffic",
]

#: ``[schema]`` of the generated pageviews: ``ts`` in epoch milliseconds, pages 1 to 300.
PAGEVIEW_SCHEMA: dict[str, Any] = {
    "key": "user_id",
    "time": "ts",
    "time_unit": "ms",
    "fields": "user_id STRING, ts BIGINT, page_number INT, url STRING",
    "required": ["user_id", "ts", "page_number"],
    "checks": {"page_number": {"min": 1, "max": 300}},
}
#: ``[sessions.aggregates]`` of the example: the first and last page of each session.
PAGEVIEW_AGGREGATES = {"first_url": "first(url)", "last_url": "last(url)"}
