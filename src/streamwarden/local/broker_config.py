"""The files a local single-node Kafka broker starts from: ``server.properties`` (KRaft, the
broker and its controller in one process) and a log4j2 configuration, plus the free ports and
the cluster id it needs. Pure file writing; :mod:`streamwarden.local.broker` runs it.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from streamwarden.spark.network import LOOPBACK

__all__ = [
    "BrokerSetup",
    "new_cluster_id",
    "server_properties",
    "write_broker_files",
]

HOST = LOOPBACK

#: What a one-node cluster needs that the defaults (sized for three or more) do not give, and
#: what keeps it light on a two-core machine that runs Spark beside it.
SINGLE_NODE: Mapping[str, str] = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    # internal topics: one replica, and a few partitions instead of 50 (each is files to create)
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    # a consumer group starts at once instead of waiting 3 s for more members
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    # a topic nobody created is an error, as it would be on a managed cluster
    "auto.create.topics.enable": "false",
    "log.segment.bytes": str(8 * 1024 * 1024),
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "4",
}

#: The broker logs to its standard output, which the launcher sends to a file: INFO from Kafka
#: (start-up, topic and group changes), WARN from the chattiest loggers.
LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.requests.name = kafka.request.logger
logger.requests.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
"""


@dataclass(frozen=True)
class BrokerSetup:
    """What one broker starts from: its listener and its files, all under ``folder``."""

    bootstrap_servers: str
    folder: Path
    server_properties: Path
    log4j2: Path
    data: Path
    log: Path
    #: ``host:port`` of the SASL/PLAIN listener, if the broker has one.
    sasl_servers: str | None = None


def new_cluster_id() -> str:
    """A cluster id as ``kafka-storage random-uuid`` prints one (16 random bytes, URL-safe
    base64 without padding), made here to save starting a JVM. Like Kafka's, never one that
    starts with '-', which the storage tool's argument parser would take for an option."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


def server_properties(
    *,
    data: Path,
    broker_port: int,
    controller_port: int,
    sasl_port: int | None = None,
    sasl_users: Mapping[str, str] | None = None,
) -> str:
    """The ``server.properties`` of a single-node KRaft cluster on 127.0.0.1.

    The controller quorum is dynamic (``controller.quorum.bootstrap.servers``), the form Kafka
    4 formats with ``kafka-storage format --standalone``. With ``sasl_port``, a second listener
    there takes SASL/PLAIN logins of ``sasl_users`` (name -> password) over plain TCP, as a
    cluster behind SASL would (a test's users; the PLAINTEXT listener stays for the broker).
    """
    listeners = f"PLAINTEXT://{HOST}:{broker_port},CONTROLLER://{HOST}:{controller_port}"
    settings = {
        **SINGLE_NODE,
        "controller.quorum.bootstrap.servers": f"{HOST}:{controller_port}",
        "listeners": listeners,
        "advertised.listeners": listeners,
        "log.dirs": str(data),
    }
    if sasl_port is not None:
        sasl = f"SASL_PLAINTEXT://{HOST}:{sasl_port}"
        users = " ".join(f'user_{n}="{p}"' for n, p in (sasl_users or {}).items())
        settings["listeners"] = settings["advertised.listeners"] = f"{listeners},{sasl}"
        settings["listener.security.protocol.map"] += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
        settings["sasl.enabled.mechanisms"] = "PLAIN"
        settings["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
        )
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def write_broker_files(
    folder: Path,
    *,
    broker_port: int,
    controller_port: int,
    sasl_port: int | None = None,
    sasl_users: Mapping[str, str] | None = None,
) -> BrokerSetup:
    """Writes ``server.properties`` and ``log4j2.properties`` into ``folder``; returns the
    listeners and where those files, the data folder and the log file are."""
    files = BrokerSetup(
        bootstrap_servers=f"{HOST}:{broker_port}",
        sasl_servers=None if sasl_port is None else f"{HOST}:{sasl_port}",
        folder=folder,
        server_properties=folder / "server.properties",
        log4j2=folder / "log4j2.properties",
        data=folder / "data",
        log=folder / "broker.log",
    )
    files.server_properties.write_text(
        server_properties(
            data=files.data,
            broker_port=broker_port,
            controller_port=controller_port,
            sasl_port=sasl_port,
            sasl_users=sasl_users,
        ),
        encoding="utf-8",
    )
    files.log4j2.write_text(LOG4J2, encoding="utf-8")
    return files
