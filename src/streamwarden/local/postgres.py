"""A real throwaway PostgreSQL server on 127.0.0.1, for tests and demos: a fresh cluster
(``initdb``) in a temporary folder, a free port, password logins, stopped by its PID and
removed by :meth:`LocalPostgres.stop`. The server programs are Debian's (``postgresql``,
installed by ``scripts/ensure_postgres.sh``).

``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres`` system
user and every server program runs through ``runuser``; as any other user, as that user.

Example::

    with LocalPostgres() as pg:
        psycopg.connect(pg.conninfo())
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from datetime import timedelta
from pathlib import Path

from streamwarden.errors import LocalServerError
from streamwarden.local.server import LocalServer, free_ports

__all__ = ["LocalPostgres", "postgres_bin"]

SYSTEM_USER = "postgres"
SUPERUSER = "streamwarden"
DATABASE = "streamwarden"
STOP_TIMEOUT = timedelta(seconds=30)
POLL_INTERVAL_S = 0.05


def postgres_bin() -> Path:
    """The folder of PostgreSQL's server programs (the newest installed)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_version)
    if not found:
        raise LocalServerError(
            "PostgreSQL's server programs are not installed (no /usr/lib/postgresql/*/bin/"
            "initdb); run scripts/ensure_postgres.sh (make postgres), or apt-get install "
            "postgresql"
        )
    return found[-1].parent


def _version(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in path.parent.parent.name.split(".") if p.isdigit())


class LocalPostgres(LocalServer):
    """One PostgreSQL server of its own cluster on a free port of 127.0.0.1, with a superuser
    :data:`SUPERUSER` (a random password, :attr:`password`) and a database :data:`DATABASE`."""

    def __init__(self) -> None:
        self.password = secrets.token_urlsafe(16)
        self.port = 0
        self._folder: Path | None = None
        self._pid: int | None = None
        self._finalizer: weakref.finalize[..., LocalPostgres] | None = None

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def database(self) -> str:
        return DATABASE

    @property
    def user(self) -> str:
        return SUPERUSER

    def conninfo(self) -> str:
        """A libpq connection string for :data:`DATABASE` (it holds the password)."""
        return (
            f"host={self.host} port={self.port} dbname={DATABASE} user={SUPERUSER} "
            f"password={self.password}"
        )

    def start(self) -> LocalPostgres:
        """Makes a fresh cluster and starts its server; returns once it takes connections."""
        if self._pid is not None:
            raise LocalServerError(f"the local PostgreSQL already runs on port {self.port}")
        bin_dir = postgres_bin()
        folder = Path(tempfile.mkdtemp(prefix="streamwarden-pg-"))
        try:
            self._pid = self._init_and_start(bin_dir, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._folder = folder
        self._finalizer = weakref.finalize(self, _shut_down, self._pid, folder)
        self._create_database()
        return self

    def stop(self) -> None:
        """Stops the server (SIGINT, PostgreSQL's fast shutdown, to its PID; SIGKILL after the
        stop timeout) and removes its cluster. Does nothing if it is not running."""
        if self._finalizer is not None:
            self._finalizer()
        self._pid, self._folder, self._finalizer = None, None, None

    def _init_and_start(self, bin_dir: Path, folder: Path) -> int:
        as_root = os.geteuid() == 0
        data, log, pwfile = folder / "data", folder / "server.log", folder / "pwfile"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        pwfile.chmod(0o600)
        if as_root:
            shutil.chown(folder, user=SYSTEM_USER)
            shutil.chown(pwfile, user=SYSTEM_USER)
        self._run(as_root, [
            str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}",
            "-A", "scram-sha-256", "-E", "UTF8", "--no-sync",
        ], "initdb")  # fmt: skip
        pwfile.unlink()
        (self.port,) = free_ports(1)
        options = (
            f"-p {self.port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=20"
        )
        self._run(as_root, [
            str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w",
            "-t", "60", "start",
        ], f"pg_ctl start (its log: {log})")  # fmt: skip
        return int((data / "postmaster.pid").read_text(encoding="utf-8").split()[0])

    @staticmethod
    def _run(as_root: bool, command: list[str], what: str) -> None:
        if as_root:
            command = ["runuser", "-u", SYSTEM_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, timeout=120, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
            raise LocalServerError(
                f"{what} failed (code {done.returncode}); it printed: {' | '.join(output[-5:])}"
            )

    def _create_database(self) -> None:
        import psycopg

        info = self.conninfo().replace(f"dbname={DATABASE}", "dbname=postgres")
        with psycopg.connect(info, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")


def _shut_down(pid: int, folder: Path) -> None:
    """Fast shutdown of the server by its PID, SIGKILL after the timeout; removes its folder.
    A finalizer too: it must not refer to the server object."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT.total_seconds()
        while _alive(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(POLL_INTERVAL_S)
    shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # the server is not our child: once it exits, nothing reaps it but init, and a zombie
    # answers signal 0 until then; its state in /proc tells
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
