"""A real single-node Kafka broker on 127.0.0.1, for tests and local runs: KRaft (the broker and
its controller in one JVM, no ZooKeeper), run from the ``kafka-broker`` jar set, its storage and
log in a temporary folder that :meth:`LocalBroker.stop` removes.

Example::

    with LocalBroker() as broker:
        broker.create_topic("pageviews", partitions=2)
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})

The JVM runs in its own process group, so a Ctrl-C meant for the test run does not kill it
under a running test; :meth:`~LocalBroker.stop` (or the end of the interpreter) ends it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from streamwarden.errors import LocalBrokerError
from streamwarden.kafka.jars import broker_jars, java_executable
from streamwarden.local.broker_config import BrokerSetup, new_cluster_id, write_broker_files
from streamwarden.local.server import LocalServer, free_ports

__all__ = ["LocalBroker"]

_LOG = logging.getLogger(__name__)

START_TIMEOUT = timedelta(seconds=90)
STOP_TIMEOUT = timedelta(seconds=30)
REQUEST_TIMEOUT = timedelta(seconds=30)
#: Small: the machine may have two cores and a Spark JVM beside the broker.
JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
#: Lines of the broker's log an error quotes.
LOG_TAIL_LINES = 25
#: How long a check waits between polls of a condition (always under a deadline).
POLL_INTERVAL_S = 0.05


class LocalBroker(LocalServer):
    """A single-node Kafka 4 broker on free ports of 127.0.0.1, started by :meth:`start` (or
    ``with``), with no topics until :meth:`create_topic` (topics are never created on use)."""

    def __init__(
        self,
        *,
        start_timeout: timedelta = START_TIMEOUT,
        sasl_users: Mapping[str, str] | None = None,
    ) -> None:
        """With ``sasl_users`` (name -> password), the broker also has a SASL/PLAIN listener
        (:attr:`sasl_servers`) that takes those logins."""
        self._start_timeout = start_timeout
        self._sasl_users = dict(sasl_users) if sasl_users else None
        self._files: BrokerSetup | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._admin: AdminClient | None = None
        self._finalizer: weakref.finalize[..., LocalBroker] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of the broker's listener, for clients' ``bootstrap.servers``."""
        return self._running()[0].bootstrap_servers

    @property
    def sasl_servers(self) -> str:
        """``host:port`` of the SASL/PLAIN listener (given ``sasl_users``)."""
        servers = self._running()[0].sasl_servers
        if servers is None:
            raise LocalBrokerError("this local broker has no SASL listener; give sasl_users")
        return servers

    @property
    def log_path(self) -> Path:
        """The broker's log (its standard output and error): where to look when it misbehaves."""
        return self._running()[0].log

    def start(self) -> LocalBroker:
        """Formats fresh storage and starts the broker; returns once it answers clients.

        Raises :class:`LocalBrokerError` (with the end of the broker's log, which is kept) if it
        exits or does not answer within the start timeout.
        """
        if self._files is not None:
            raise LocalBrokerError(
                f"the local broker already runs at {self.bootstrap_servers}; stop() it first"
            )
        classpath = os.pathsep.join(broker_jars())
        java = java_executable()
        folder = Path(tempfile.mkdtemp(prefix="streamwarden-kafka-"))
        try:
            files = _prepare(folder, java, classpath, self._sasl_users)
            process = _launch(java, classpath, files)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._files, self._process = files, process
        self._finalizer = weakref.finalize(self, _shut_down, process, folder, False)
        try:
            self._wait_until_answering()
        except BaseException:
            self._stop(keep_files=True)
            raise
        _LOG.info("local Kafka broker at %s, log %s", files.bootstrap_servers, files.log)
        return self

    def create_topic(
        self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None
    ) -> None:
        """Creates topic ``name`` (one replica) and returns once every partition has a leader,
        so a producer or consumer can use it at once."""
        topic = NewTopic(
            name, num_partitions=partitions, replication_factor=1, config=dict(config or {})
        )
        timeout = REQUEST_TIMEOUT.total_seconds()
        futures = self._admin_client().create_topics(
            [topic], operation_timeout=timeout, request_timeout=timeout
        )
        self._result(futures[name].result, f"create topic {name!r}")
        self._wait_for(lambda: self._leaders(name) == partitions, f"topic {name!r} to be ready")

    def delete_topic(self, name: str) -> None:
        """Deletes topic ``name`` and returns once the broker no longer lists it."""
        timeout = REQUEST_TIMEOUT.total_seconds()
        futures = self._admin_client().delete_topics(
            [name], operation_timeout=timeout, request_timeout=timeout
        )
        self._result(futures[name].result, f"delete topic {name!r}")
        self._wait_for(lambda: self._leaders(name) is None, f"topic {name!r} to be gone")

    def kill(self) -> None:
        """Ends the broker with SIGKILL, as a crash would, keeping its ports, storage and log
        for :meth:`restart` (:meth:`stop` still removes them)."""
        _, process = self._running()
        _signal_group(process, signal.SIGKILL)
        process.wait()
        self._admin = None

    def restart(self) -> LocalBroker:
        """Starts a :meth:`kill`-ed broker again on the same ports and storage (what it had
        written survives); returns once it answers clients."""
        files, process = self._running()
        if process.poll() is None:
            raise LocalBrokerError(f"the local broker at {self.bootstrap_servers} still runs")
        assert self._finalizer is not None
        self._finalizer.detach()
        self._process = _launch(java_executable(), os.pathsep.join(broker_jars()), files)
        self._finalizer = weakref.finalize(self, _shut_down, self._process, files.folder, False)
        self._wait_until_answering()
        return self

    def stop(self) -> None:
        """Stops the broker (SIGTERM to its process group, SIGKILL if it has not exited within
        the stop timeout) and removes its folder. Does nothing if it is not running."""
        self._stop(keep_files=False)

    def _stop(self, *, keep_files: bool) -> None:
        if self._finalizer is not None and self._process is not None and self._files is not None:
            self._finalizer.detach()
            _shut_down(self._process, self._files.folder, keep_files)
        self._files, self._process, self._admin, self._finalizer = None, None, None, None

    def _running(self) -> tuple[BrokerSetup, subprocess.Popen[bytes]]:
        if self._files is None or self._process is None:
            raise LocalBrokerError("the local broker is not running; call start() first")
        return self._files, self._process

    def _admin_client(self) -> AdminClient:
        if self._admin is None:
            # the client's own log (refused connections while the broker starts) goes to
            # Python logging, not straight to stderr
            self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers}, logger=_LOG)
        return self._admin

    def _leaders(self, topic: str) -> int | None:
        """How many partitions of ``topic`` have a leader, or None if the broker has no such
        topic."""
        try:
            metadata = self._admin_client().list_topics(topic=topic, timeout=1.0)
        except KafkaException:
            return 0
        found = metadata.topics.get(topic)
        if found is None or found.error is not None:
            return None
        return sum(1 for p in found.partitions.values() if p.leader >= 0 and p.error is None)

    def _wait_until_answering(self) -> None:
        def answers() -> bool:
            try:
                self._admin_client().list_topics(timeout=1.0)
            except KafkaException:
                return False
            return True

        self._wait_for(answers, "the broker to answer clients", self._start_timeout)

    def _wait_for(
        self, condition: Callable[[], bool], what: str, timeout: timedelta = REQUEST_TIMEOUT
    ) -> None:
        """Polls ``condition`` until it holds; raises if the broker exits or time runs out."""
        files, process = self._running()
        deadline = time.monotonic() + timeout.total_seconds()
        while not condition():
            if process.poll() is not None:
                raise _failure(f"the local broker exited (code {process.returncode})", files)
            if time.monotonic() > deadline:
                raise _failure(f"timed out after {timeout} waiting for {what}", files)
            time.sleep(POLL_INTERVAL_S)

    def _result(self, wait: Callable[[float], object], what: str) -> None:
        try:
            wait(REQUEST_TIMEOUT.total_seconds())
        except KafkaException as exc:
            error = exc.args[0] if exc.args else exc
            reason = error.str() if isinstance(error, KafkaError) else str(error)
            raise LocalBrokerError(
                f"could not {what} on the local broker at {self.bootstrap_servers}: {reason} "
                f"(its log: {str(self.log_path)!r})"
            ) from None


def _prepare(
    folder: Path, java: str, classpath: str, sasl_users: Mapping[str, str] | None
) -> BrokerSetup:
    """Writes the broker's files into ``folder`` and formats its storage as a one-controller
    dynamic quorum (``kafka-storage format --standalone``, Kafka 4's form)."""
    broker_port, controller_port, sasl_port = free_ports(3)
    files = write_broker_files(
        folder,
        broker_port=broker_port,
        controller_port=controller_port,
        sasl_port=sasl_port if sasl_users else None,
        sasl_users=sasl_users,
    )
    command = [
        java, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={files.log4j2}",
        "-cp", classpath, "kafka.tools.StorageTool", "format",
        "--cluster-id", new_cluster_id(), "--config", str(files.server_properties),
        "--standalone",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
        raise LocalBrokerError(
            f"formatting the local broker's storage failed (code {done.returncode}); "
            f"is the 'kafka-broker' jar set intact? It printed: {' | '.join(output[-5:])}"
        )
    return files


def _launch(java: str, classpath: str, files: BrokerSetup) -> subprocess.Popen[bytes]:
    """Starts ``kafka.Kafka`` in its own process group, all its output into the log file."""
    command = [
        java, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={files.log4j2}",
        "-cp", classpath, "kafka.Kafka", str(files.server_properties),
    ]  # fmt: skip
    with files.log.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=files.folder,
            process_group=0,
        )


def _shut_down(process: subprocess.Popen[bytes], folder: Path, keep_files: bool) -> None:
    """SIGTERM to the broker's process group, SIGKILL after the stop timeout; then removes its
    folder unless asked to keep it. A finalizer too: it must not refer to the broker object."""
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT.total_seconds())
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()
    if not keep_files:
        shutil.rmtree(folder, ignore_errors=True)


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
        os.killpg(process.pid, sig)  # process_group=0 made its group id its pid


def _failure(what: str, files: BrokerSetup) -> LocalBrokerError:
    """An error saying ``what`` happened, where the full log is, and how the log ends."""
    try:
        lines = files.log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    tail = "\n".join(lines[-LOG_TAIL_LINES:])
    return LocalBrokerError(f"{what}; see the broker's log {str(files.log)!r}, which ends:\n{tail}")
