"""A real Spark standalone cluster on 127.0.0.1, for tests and benchmarks: one master and some
workers started with ``bin/spark-class`` from the pyspark wheel (which ships no ``sbin/``
scripts), on free ports, their work and log folders in a temporary folder that
:meth:`LocalStandaloneCluster.stop` removes.

Example::

    with LocalStandaloneCluster(workers=2) as cluster:
        subprocess.run(["streamwarden", "submit", "pipeline.toml", "--master", cluster.master_url])

Each daemon runs in its own process group, so a Ctrl-C meant for the test run does not kill it
under a running test; :meth:`~LocalStandaloneCluster.stop` ends the groups by their ids (the
executors the workers started are in their worker's group). Executors run the Python of this
process (``PYSPARK_PYTHON``), as on a cluster whose hosts share one environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from streamwarden.errors import EngineError
from streamwarden.local.server import LocalServer, free_ports
from streamwarden.spark.network import LOOPBACK

__all__ = ["ExecutorProcess", "LocalStandaloneCluster", "spark_home"]

START_TIMEOUT = timedelta(seconds=120)
STOP_TIMEOUT = timedelta(seconds=30)
#: The daemons themselves only schedule: a small heap each (Spark's default is 1 GiB).
DAEMON_MEMORY = "256m"
#: How long a check waits between polls of a condition (always under a deadline).
POLL_INTERVAL_S = 0.2
_MASTER_CLASS = "org.apache.spark.deploy.master.Master"
_WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
_EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def spark_home() -> Path:
    """The pyspark package folder, which holds ``bin/spark-class`` and Spark's ``jars/``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass(frozen=True)
class ExecutorProcess:
    """An executor JVM a worker started for an application."""

    pid: int
    app_id: str
    executor_id: str
    worker: int


class LocalStandaloneCluster(LocalServer):
    """A standalone master and ``workers`` workers (``cores`` cores, ``memory`` each) on free
    ports of 127.0.0.1, started by :meth:`start` (or ``with``)."""

    def __init__(
        self,
        *,
        workers: int = 2,
        cores: int = 1,
        memory: str = "1g",
        python: str = sys.executable,
        start_timeout: timedelta = START_TIMEOUT,
    ) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.python = python
        self._start_timeout = start_timeout
        self._folder: Path | None = None
        self._master_port = 0
        self._ui_port = 0
        self._processes: list[subprocess.Popen[bytes]] = []
        self._finalizer: weakref.finalize[..., LocalStandaloneCluster] | None = None

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:PORT``: what ``--master`` takes."""
        self._running()
        return f"spark://{LOOPBACK}:{self._master_port}"

    @property
    def ui_url(self) -> str:
        """The master's web UI; ``/json/`` there lists workers and applications."""
        self._running()
        return f"http://{LOOPBACK}:{self._ui_port}"

    @property
    def folder(self) -> Path:
        """The cluster's folder: ``logs/`` of the daemons, ``work-N/`` of worker N."""
        return self._running()

    def state(self) -> dict[str, Any]:
        """The master's view (``/json/``): workers, active and completed applications."""
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
            state: dict[str, Any] = json.load(response)
        return state

    def start(self) -> LocalStandaloneCluster:
        """Starts the master, then the workers; returns once every worker has registered.

        Raises :class:`EngineError` (naming the daemons' logs, which are kept) if a daemon exits
        or the workers do not register within the start timeout.
        """
        if self._folder is not None:
            raise EngineError(f"the local cluster already runs at {self.master_url}")
        folder = Path(tempfile.mkdtemp(prefix="streamwarden-cluster-"))
        (folder / "logs").mkdir()
        self._folder = folder
        self._finalizer = weakref.finalize(self, _shut_down, list(self._processes), folder, False)
        try:
            self._master_port, self._ui_port = free_ports(2)
            self._launch(
                "master",
                _MASTER_CLASS,
                "--host",
                LOOPBACK,
                "--port",
                str(self._master_port),
                "--webui-port",
                str(self._ui_port),
            )
            self._wait_for(lambda: self._alive_workers() is not None, "the master to answer")
            for n in range(self.workers):
                work = folder / f"work-{n}"
                work.mkdir()
                (ui_port,) = free_ports(1)
                self._launch(
                    f"worker-{n}",
                    _WORKER_CLASS,
                    "--host",
                    LOOPBACK,
                    "--webui-port",
                    str(ui_port),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(work),
                    f"spark://{LOOPBACK}:{self._master_port}",
                )
            self._wait_for(
                lambda: self._alive_workers() == self.workers,
                f"{self.workers} workers to register",
            )
        except BaseException:
            self._stop(keep_files=True)
            raise
        return self

    def executors(self, app_id: str) -> list[ExecutorProcess]:
        """The executor JVMs the workers run for application ``app_id`` (from ``/proc``: each
        is a child of its worker, its command line carries the application's id)."""
        found = []
        for n, worker in enumerate(self._processes[1:]):
            for pid in _children(worker.pid):
                args = _command_line(pid)
                if _EXECUTOR_CLASS in args and app_id in args:
                    executor_id = args[args.index("--executor-id") + 1]
                    found.append(ExecutorProcess(pid, app_id, executor_id, n))
        return found

    def stop(self) -> None:
        """Stops every daemon (SIGTERM to its process group, SIGKILL if it has not exited within
        the stop timeout) and removes the cluster's folder. Does nothing if it is not running."""
        self._stop(keep_files=False)

    def _launch(self, name: str, main_class: str, *args: str) -> None:
        folder = self._running()
        home = spark_home()
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
            "SPARK_LOG_DIR": str(folder / "logs"),
            "PYSPARK_PYTHON": self.python,
        }
        with (folder / "logs" / f"{name}.out").open("ab") as out:
            process = subprocess.Popen(
                [str(home / "bin" / "spark-class"), main_class, *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group, stopped as one
            )
        self._processes.append(process)
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _shut_down, list(self._processes), folder, False)

    def _alive_workers(self) -> int | None:
        try:
            state = self.state()
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def _wait_for(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self._start_timeout.total_seconds()
        while not condition():
            for process in self._processes:
                if process.poll() is not None:
                    raise EngineError(
                        f"a Spark daemon exited with code {process.returncode} while waiting "
                        f"for {what}; see the logs in {str(self._running() / 'logs')!r}"
                    )
            if time.monotonic() > deadline:
                raise EngineError(
                    f"timed out after {self._start_timeout} waiting for {what}; see the logs "
                    f"in {str(self._running() / 'logs')!r}"
                )
            time.sleep(POLL_INTERVAL_S)

    def _running(self) -> Path:
        if self._folder is None:
            raise EngineError("the local cluster is not running; call start() first")
        return self._folder

    def _stop(self, *, keep_files: bool) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._folder is not None:
            _shut_down(self._processes, self._folder, keep_files)
        self._folder, self._processes, self._finalizer = None, [], None


def _shut_down(processes: list[subprocess.Popen[bytes]], folder: Path, keep_files: bool) -> None:
    """Workers first (with their executors), then the master; each group by its id."""
    for process in reversed(processes):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT.total_seconds()
    for process in reversed(processes):
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        # executors outlive a worker killed hard; they are in its group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if not keep_files:
        shutil.rmtree(folder, ignore_errors=True)


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux ``/proc``)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")"
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


def _command_line(pid: int) -> list[str]:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []
