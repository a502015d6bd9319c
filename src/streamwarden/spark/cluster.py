"""What changes when a pipeline's tasks run in executor JVMs (a ``spark://``, ``k8s://`` or
``yarn`` master) instead of inside the driver.

What travels to executors, and how: the engine jar and the connector jars a config needs go on
``spark.jars`` (:func:`streamwarden.spark.session.build_spark_session`); Spark serves them from
the driver and each executor fetches them into its own folder before its first task. Executors
run no Python of streamwarden's for sessions and patterns (the per-key work is the Java engine;
the batch writer runs on the driver); a keyed processor (``operator = "process"``) runs in
Python workers, which need the package, its dependencies and the processor's module.

What Spark settings a cluster run gets unless the config sets them (:func:`cluster_defaults`):
the driver waits for every requested executor before the first batch, so that the state
partitions of that batch, whose stores later batches prefer to revisit, are spread over all of
them rather than over whichever executor registered first.
"""

from __future__ import annotations

import sys

from streamwarden.spark.network import is_local_master

__all__ = ["MIN_REGISTERED", "PYTHON", "cluster_defaults"]

#: The interpreter Spark starts its Python workers with.
PYTHON = "spark.pyspark.python"

#: The share of requested executors that must have registered before the first job is scheduled
#: (Spark waits at most ``spark.scheduler.maxRegisteredResourcesWaitingTime``, 30 s by default).
MIN_REGISTERED = "spark.scheduler.minRegisteredResourcesRatio"


def cluster_defaults(master: str) -> dict[str, str]:
    """The settings a run on ``master`` gets unless the config sets them. In local mode, the
    Python workers (a keyed processor's) run the driver's own interpreter, which has
    streamwarden, its dependencies and the processor's modules; on a cluster, the
    executors' Python is the deployment's (``spark.pyspark.python``)."""
    if is_local_master(master):
        return {PYTHON: sys.executable}
    return {MIN_REGISTERED: "1.0"}
