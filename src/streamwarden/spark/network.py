"""Who can reach a pipeline's Spark driver: nobody but this host, in local mode, by default.

Spark's driver UI listens on every interface unless told otherwise, with links that kill
stages, and shows the job's configuration, environment and thread dumps; its RPC and block
manager ports listen on the host's outward address. A local-mode pipeline needs none of them
from another machine (``streamwarden status`` asks the UI from the same host), so
:func:`network_defaults` binds the driver to the loopback address and turns the kill links off,
and :func:`jvm_environment` gives the JVM the one switch Spark's UI reads from the environment
rather than from its settings (``SPARK_LOCAL_IP``: the UI binds there, else to ``0.0.0.0``).

Each default yields to the user's own setting: ``spark.driver.bindAddress`` (and
``spark.driver.host``) to serve another interface on purpose, ``spark.ui.killEnabled = true``
for the kill links. On a cluster master the driver must be reachable by executors; what
protects it there is checked by ``doctor`` (``doctor/exposure.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = [
    "BIND_ADDRESS",
    "KILL_ENABLED",
    "LOOPBACK",
    "is_local_master",
    "jvm_environment",
    "network_defaults",
]

LOOPBACK = "127.0.0.1"
BIND_ADDRESS = "spark.driver.bindAddress"
KILL_ENABLED = "spark.ui.killEnabled"
#: The environment variable Spark's UI (``org.apache.spark.ui.WebUI.bind``) binds to.
_LOCAL_IP = "SPARK_LOCAL_IP"


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs every task inside the driver (``local``, ``local[N]``, ...)."""
    return master.replace(" ", "").startswith("local")


def network_defaults(master: str) -> dict[str, str]:
    """The driver's network settings streamwarden sets unless the user sets them: kill links
    off everywhere; in local mode, driver, block manager and UI on the loopback address."""
    defaults = {KILL_ENABLED: "false"}
    if is_local_master(master):
        defaults |= {BIND_ADDRESS: LOOPBACK, "spark.driver.host": LOOPBACK}
    return defaults


@contextmanager
def jvm_environment(settings: Mapping[str, str]) -> Iterator[None]:
    """While a JVM is started inside this block, it sees ``SPARK_LOCAL_IP`` set to the local
    driver's bind address, so that the UI listens there too. A value the user exported is kept;
    nothing is set for a cluster master. The process's environment is restored afterwards."""
    master = settings.get("spark.master", "")
    address = settings.get(BIND_ADDRESS)
    if not is_local_master(master) or address is None or _LOCAL_IP in os.environ:
        yield
        return
    os.environ[_LOCAL_IP] = address
    try:
        yield
    finally:
        os.environ.pop(_LOCAL_IP, None)
