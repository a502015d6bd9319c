"""Who can reach the pipeline's driver (docs/failure-modes.md#exposed-driver).

In local mode streamwarden binds the driver and its UI to 127.0.0.1 and turns the UI's kill
links off (``spark/network.py``); these checks find a config that undoes that. On a cluster
master the driver must listen where executors can reach it, so what protects it is Spark's own
security: ``spark.authenticate`` for its RPC, and ACLs (``spark.acls.enable``) or an
authentication filter (``spark.ui.filters``) for its UI, or no UI at all.
"""

from __future__ import annotations

import ipaddress

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.spark.network import (
    BIND_ADDRESS,
    KILL_ENABLED,
    is_local_master,
    network_defaults,
)

__all__ = ["check_exposure"]

_SEE = "exposed-driver"


def _true(conf: dict[str, str], key: str, default: str = "false") -> bool:
    return conf.get(key, default).strip().lower() == "true"


def check_exposure(config: PipelineConfig) -> list[Finding]:
    """Findings for a driver or UI that other hosts can reach without a login."""
    master = config.spark.master
    conf = {**network_defaults(master), **config.spark.conf}
    ui_on = _true(conf, "spark.ui.enabled", "true")
    out = []
    if ui_on and _true(conf, KILL_ENABLED):
        out.append(
            Finding(
                "ui-kill-links-on",
                Severity.WARNING,
                f"spark.conf sets {KILL_ENABLED} = true: whoever reaches the Spark UI can kill "
                "the pipeline's stages",
                f"remove {KILL_ENABLED} from spark.conf (streamwarden turns the links off)",
                _SEE,
            )
        )
    if is_local_master(master):
        address = conf.get(BIND_ADDRESS, "")
        if not _loopback(address):
            out.append(
                Finding(
                    "driver-on-network",
                    Severity.WARNING,
                    f"spark.conf sets {BIND_ADDRESS} = {address!r}: the local driver, its UI "
                    "(configuration, thread dumps) and its ports listen beyond this host",
                    f"remove {BIND_ADDRESS} and spark.driver.host from spark.conf; `streamwarden "
                    "status` reads the UI from this host",
                    _SEE,
                )
            )
        return out
    if not _true(conf, "spark.authenticate"):
        out.append(
            Finding(
                "cluster-unauthenticated",
                Severity.WARNING,
                f"master {master!r} without spark.authenticate = true: anyone who reaches the "
                "driver's or executors' ports can talk to them",
                'set spark.conf "spark.authenticate" = "true" with a shared secret from the '
                "environment (spark.authenticate.secret is never written in the config)",
                _SEE,
            )
        )
    if ui_on and not _true(conf, "spark.acls.enable") and not conf.get("spark.ui.filters"):
        out.append(
            Finding(
                "cluster-ui-open",
                Severity.WARNING,
                f"master {master!r}: the Spark UI shows the job's configuration and thread "
                "dumps to anyone who reaches it, with no ACLs and no authentication filter",
                'set "spark.acls.enable" = "true" with spark.ui.view.acls, or an authentication '
                'filter in "spark.ui.filters", or "spark.ui.enabled" = "false" (status then '
                "shows the progress log only)",
                _SEE,
            )
        )
    return out


def _loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
