"""Can a config work where its master runs the tasks (docs/failure-modes.md#host-local-storage)?

With a ``local`` master every task runs in the driver, so every folder of the config is on the
one host that reads and writes it. With a cluster master, executors on other hosts write the
state store's files into the checkpoint, read the landing folder (and the idle ticks inside the
checkpoint) and write the Parquet and Delta sinks' files, while the driver commits the batches:
all of them must see the same folders at the same paths. streamwarden's folders are POSIX paths,
so that means a shared mount (NFS, a cluster file system), which the config declares with
``[spark] shared_storage = true``.
"""

from __future__ import annotations

from pathlib import Path

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.spark.network import is_local_master

__all__ = ["check_cluster_storage", "shared_folders"]

_SEE = "host-local-storage"


def shared_folders(config: PipelineConfig) -> list[Path]:
    """The folders executors read or write: the checkpoint, the landing folder, sink folders."""
    folders = [config.checkpoint.path]
    if config.source.path is not None:
        folders.append(config.source.path)
    folders += [s.path for s in config.sinks.configured().values() if s.path is not None]
    return folders


def check_cluster_storage(config: PipelineConfig) -> list[Finding]:
    """An error for a cluster master whose config does not declare shared storage."""
    master = config.spark.master
    if is_local_master(master) or config.spark.shared_storage:
        return []
    folders = ", ".join(repr(str(p)) for p in shared_folders(config))
    return [
        Finding(
            "cluster-storage-not-shared",
            Severity.ERROR,
            f"master {master!r} runs tasks in executors on other hosts, but the config does not "
            f"declare its folders ({folders}) shared: executors would write state and outputs "
            "to their own disks, where the driver and the next attempt of a task never look",
            "put the checkpoint, landing and sink folders on a mount every host sees at the same "
            "path (NFS or a cluster file system), then set [spark] shared_storage = true; or run "
            "on a local[N] master",
            _SEE,
        )
    ]
