"""A never-ending Flink job (``bench/scale/flink_live.py``) started, watched and stopped from a
benchmark: the restart benchmark kills one and restores its retained checkpoint; the heap-to-
RocksDB transfer stops one with a savepoint and restores that on the other backend."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scale.common import BENCH, FLINK_PYTHON, FlinkRest
from streamwarden.local.server import free_ports


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the process group a benchmark started (Python and its JVM)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def wait_until(
    condition: Callable[[], Any], process: subprocess.Popen[bytes], deadline_s: float, what: str
) -> float:
    """Polls ``condition`` until true; returns the seconds waited. Fails if the process exits."""
    t0 = time.perf_counter()
    while not condition():
        if process.poll() is not None:
            raise RuntimeError(
                f"the pipeline exited ({process.returncode}) while waiting for {what}"
            )
        if time.perf_counter() - t0 > deadline_s:
            kill(process)
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.2)
    return time.perf_counter() - t0


class FlinkJob:
    """One run of ``flink_live.py`` in a process group of its own, watched through its REST API.

    ``query`` is ``flink_live.py``'s (sessions or patterns), ``conf`` more Flink options
    (``KEY=VALUE``), ``env`` added to the process's environment (``flink_jvm_env``'s heap and GC
    log)."""

    def __init__(
        self,
        state: str,
        inputs: Path,
        live: Path,
        checkpoints: Path,
        log: Path,
        restore: Path | None = None,
        query: str = "sessions",
        conf: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        (port,) = free_ports(1)
        self.rest = FlinkRest(port)
        command = [
            str(FLINK_PYTHON),
            str(BENCH / "scale" / "flink_live.py"),
            "--input",
            str(inputs),
            "--live",
            str(live),
            "--state",
            state,
            "--checkpoints",
            str(checkpoints),
            "--rest-port",
            str(port),
            "--query",
            query,
            *(f"--conf={c}" for c in conf),
        ]
        if restore is not None:
            command += ["--restore", str(restore)]
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=out,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )

    def records_read(self) -> int:
        """Events the source has emitted (the REST API's view, refreshed every 200 ms)."""
        source = next((v for v in self.rest.vertices() if v["name"].startswith("Source")), None)
        return int(source["metrics"].get("write-records", 0)) if source else 0

    def checkpoints(self) -> dict[str, Any]:
        return self.rest.checkpoints()

    def completed_since(self, epoch_ms: int) -> dict[str, Any] | None:
        """The latest completed checkpoint if it was triggered at or after ``epoch_ms``."""
        latest = (self.checkpoints().get("latest") or {}).get("completed")
        return latest if latest and latest["trigger_timestamp"] >= epoch_ms else None

    def wait_read_and_checkpointed(self, events: int, deadline_s: float, what: str) -> float:
        """Seconds until the source has read ``events`` events and a checkpoint triggered after
        that has completed."""
        t0 = time.perf_counter()
        seen: list[int] = []

        def done() -> bool:
            if not seen and self.records_read() >= events:
                seen.append(int(time.time() * 1000))
            return bool(seen) and self.completed_since(seen[0]) is not None

        wait_until(done, self.process, deadline_s, what)
        return time.perf_counter() - t0

    def stop_with_savepoint(self, target: Path, deadline_s: float) -> Path:
        """Stops the job with a savepoint in Flink's canonical format (the one any state backend
        restores) under ``target``, without draining (no final watermark: the open state stays
        open, as when a live job is stopped for an upgrade); the savepoint's folder, once the
        job's process has exited."""
        job = self.rest.job_id()
        stop = {"targetDirectory": target.resolve().as_uri(), "drain": False}
        body = json.dumps({**stop, "formatType": "CANONICAL"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.rest.port}/jobs/{job}/stop",
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            trigger = json.loads(answer.read())["request-id"]
        found: list[dict[str, Any]] = []

        def completed() -> bool:
            status = self.rest.get(f"/jobs/{job}/savepoints/{trigger}") or {}
            if (status.get("status") or {}).get("id") == "COMPLETED":
                found.append(status["operation"])
            return bool(found)

        wait_until(completed, self.process, deadline_s, "the savepoint")
        operation = found[0]
        if "location" not in operation:
            kill(self.process)
            raise RuntimeError(f"the savepoint failed: {operation.get('failure-cause')}")
        try:
            self.process.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            kill(self.process)
        return Path(operation["location"].removeprefix("file:"))

    def kill(self) -> None:
        kill(self.process)


def retained_checkpoint(folder: Path) -> Path:
    """The newest complete checkpoint (a ``chk-N`` folder with ``_metadata``) under ``folder``."""
    done = [m.parent for m in folder.glob("*/chk-*/_metadata")]
    if not done:
        raise RuntimeError(f"no complete checkpoint under {folder}")
    return max(done, key=lambda p: int(p.name.removeprefix("chk-")))
