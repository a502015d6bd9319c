"""What changes when a pipeline's tasks run in executor JVMs (a ``spark://``, ``k8s://`` or
``yarn`` master) instead of inside the driver.

What travels to executors, and how: the engine jar and the connector jars a config needs go on
``spark.jars`` (:func:`streamwarden.spark.session.build_spark_session`); Spark serves them from
the driver and each executor fetches them into its own folder before its first task. Executors
run no Python of streamwarden's (the per-key work is the Java engine; the batch writer runs on
the driver), so they need the jars, not the Python package.

What Spark settings a cluster run gets unless the config sets them (:func:`cluster_defaults`):
the driver waits for every requested executor before the first batch, so that the state
partitions of that batch, whose stores later batches prefer to revisit, are spread over all of
them rather than over whichever executor registered first.
"""

from __future__ import annotations

from streamwarden.spark.network import is_local_master

__all__ = ["MIN_REGISTERED", "cluster_defaults"]

#: The share of requested executors that must have registered before the first job is scheduled
#: (Spark waits at most ``spark.scheduler.maxRegisteredResourcesWaitingTime``, 30 s by default).
MIN_REGISTERED = "spark.scheduler.minRegisteredResourcesRatio"


def cluster_defaults(master: str) -> dict[str, str]:
    """The settings a run on ``master`` gets unless the config sets them: none in local mode."""
    if is_local_master(master):
        return {}
    return {MIN_REGISTERED: "1.0"}
