"""A small JVM holding the engine jar and the pyspark wheel's jars, without Spark: what the
testers drive the engine's processors in, and what ``doctor`` reads a sample of the input
with (the very reader a pipeline validates with)."""

from __future__ import annotations

import os
from typing import Any

from streamwarden.spark.engine_jar import engine_jar_path

__all__ = ["engine_gateway"]

_GATEWAY: Any = None


def engine_gateway() -> Any:
    """The py4j gateway of that JVM, one per Python process, started on first use."""
    global _GATEWAY
    if _GATEWAY is None:
        import pyspark
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
        classpath = os.pathsep.join([str(engine_jar_path()), jars])
        port = launch_gateway(classpath=classpath, die_on_exit=True, javaopts=["-Xmx512m"])
        _GATEWAY = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
    return _GATEWAY
