"""Windowed aggregation: tumbling and hopping event-time windows per group, with the
aggregates of sessions, computed by the Java engine (``WindowLogic``)."""

from streamwarden.operators.windows.api import WindowsResult, aggregate_windows

__all__ = ["WindowsResult", "aggregate_windows"]
