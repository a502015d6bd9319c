"""``streamwarden status``: what a running pipeline is doing now (lesson L14).

The pipeline publishes ``<checkpoint>.progress/status.json`` (its Spark UI address, query id,
what the query is doing) and the progress log. This module reads both and asks Spark's own REST
API (``/api/v1`` on the driver UI) for the running job of the current batch, its active stages,
the longest-running task, and, on request, thread dumps of the driver and every executor.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from streamwarden.errors import MonitoringError, UsageError
from streamwarden.monitoring.progress_log import (
    BatchRecord,
    has_progress_log,
    progress_dir,
    read_progress_log,
    read_status,
)

__all__ = ["PipelineStatus", "RunningTask", "collect_status", "find_progress_dir"]

_BATCH = re.compile(r"batch = (\d+)")


def find_progress_dir(target: Path) -> Path:
    """The progress folder of a config file, a checkpoint folder, or the folder itself."""
    if target.suffix in (".toml", ".yaml", ".yml") and target.is_file():
        from streamwarden.config import load_config

        return progress_dir(load_config(target).checkpoint.path)
    if target.name.endswith(".progress"):
        return target
    if target.is_dir():
        return progress_dir(target)
    raise UsageError(
        f"{str(target)!r} is neither a pipeline config, a checkpoint folder nor a "
        "<checkpoint>.progress folder; pass the config the pipeline runs with"
    )


@dataclass(frozen=True)
class RunningTask:
    stage_id: int
    stage_name: str
    task_id: int
    partition: int
    executor: str
    running_ms: int


@dataclass
class PipelineStatus:
    """What ``streamwarden status`` shows."""

    published: dict[str, Any]
    recent: list[BatchRecord] = field(default_factory=list)
    running_jobs: list[dict[str, Any]] = field(default_factory=list)
    active_stages: list[dict[str, Any]] = field(default_factory=list)
    slowest_task: RunningTask | None = None
    threads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def current_batch(self) -> int | None:
        """The batch a running job works on, else the one after the last completed."""
        for job in self.running_jobs:
            if m := _BATCH.search(str(job.get("description", ""))):
                return int(m.group(1))
        last = self.published.get("last_batch")
        return None if last is None else int(last) + 1


def collect_status(folder: Path, *, threads: bool = False, recent: int = 5) -> PipelineStatus:
    published = read_status(folder)
    if published is None:
        raise UsageError(
            f"no status file in {str(folder)!r}: is the pipeline running, with monitoring "
            "enabled? It is written when `streamwarden run` starts the query"
        )
    status = PipelineStatus(published)
    if has_progress_log(folder):
        status.recent = read_progress_log(folder, last=recent)
    if published.get("state") not in ("starting", "running"):
        return status
    if published.get("host") == socket.gethostname() and not _alive(int(published["pid"])):
        status.published = {**published, "state": f"gone (process {published['pid']} ended)"}
        return status
    api = _Api(published)
    status.running_jobs = api.get("jobs?status=running")
    status.active_stages = api.get("stages?status=active")
    status.slowest_task = _slowest_task(api, status.active_stages)
    if threads:
        for executor in api.get("executors"):
            status.threads[executor["id"]] = api.get(f"executors/{executor['id']}/threads")
    return status


class _Api:
    """Spark's monitoring REST API of one application."""

    def __init__(self, published: dict[str, Any]) -> None:
        ui = published.get("ui_url")
        if not ui:
            raise MonitoringError(
                f"pipeline {published.get('query')!r} runs without the Spark UI, so its jobs, "
                "tasks and threads cannot be asked for; remove spark.ui.enabled = false from "
                "its [spark.conf] and restart it"
            )
        if published.get("host") == socket.gethostname():
            # Spark names the UI by an outward address, which may be unroutable here (e.g. a
            # container's); a local UI listens on loopback only (spark/network.py).
            ui = f"http://127.0.0.1:{urllib.parse.urlsplit(ui).port}"
        self.base = f"{ui.rstrip('/')}/api/v1/applications/{published['app_id']}/"

    def get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.base + path, timeout=60) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError) as exc:
            raise MonitoringError(
                f"cannot reach the pipeline's Spark UI at {self.base + path!r} ({exc}); if the "
                "pipeline has stopped, its last progress is in the progress log "
                "(`streamwarden report`)"
            ) from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _slowest_task(api: _Api, stages: list[dict[str, Any]]) -> RunningTask | None:
    now_ms = int(datetime.now().timestamp() * 1000)
    slowest = None
    for stage in stages:
        path = f"stages/{stage['stageId']}/{stage['attemptId']}/taskList?status=RUNNING&length=500"
        for task in api.get(path):
            if task.get("status") != "RUNNING":
                continue
            launched = datetime.fromisoformat(str(task["launchTime"]).replace("GMT", "+00:00"))
            running_ms = now_ms - int(launched.timestamp() * 1000)
            if slowest is None or running_ms > slowest.running_ms:
                slowest = RunningTask(
                    stage_id=int(stage["stageId"]),
                    stage_name=str(stage.get("name", "")),
                    task_id=int(task["taskId"]),
                    partition=int(task.get("partitionId", task.get("index", -1))),
                    executor=str(task.get("executorId", "?")),
                    running_ms=running_ms,
                )
    return slowest
