"""Windowed aggregation: tumbling and hopping event-time windows per group, with the
aggregates of sessions, computed by the Java engine (``WindowLogic``)."""
