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
from streamwarden.settings.types import folders_of
from streamwarden.spark.network import is_local_master

__all__ = ["check_cluster_storage", "shared_folders"]

_SEE = "host-local-storage"


def shared_folders(config: PipelineConfig) -> list[Path]:
    """The folders executors read or write: the checkpoint, the landing folder, sink folders."""
    folders = [config.checkpoint.path, *folders_of(config.source, "source").values()]
    for name, sink in config.sinks.items():
        folders += folders_of(sink, f"sinks.{name}").values()
    return folders


#: File systems that several hosts mount (``/proc/mounts`` types; ``fuse.*`` counts too: most
#: cluster file systems' clients are FUSE ones).
NETWORK_FILE_SYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ocfs2",
        "gfs2",
        "9p",
        "virtiofs",
        "afs",
        "pvfs2",
    }
)


def mount_type(path: Path, mounts: Path = Path("/proc/mounts")) -> str | None:
    """The type of the file system ``path`` (or its nearest existing parent) is on, from the
    mount table; None where there is no such table."""
    try:
        table = mounts.read_text()
    except OSError:
        return None
    target = path.resolve()
    best: tuple[int, str] | None = None
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if (target == point or point in target.parents) and (
            best is None or len(str(point)) > best[0]
        ):
            best = (len(str(point)), fields[2])
    return None if best is None else best[1]


def _networked(kind: str) -> bool:
    return kind in NETWORK_FILE_SYSTEMS or kind.startswith("fuse.")


def check_cluster_storage(config: PipelineConfig) -> list[Finding]:
    """An error for a cluster master whose config does not declare shared storage; a warning
    when a declared shared folder is on a file system of this host only."""
    master = config.spark.master
    if is_local_master(master):
        return []
    if config.spark.shared_storage:
        return _looks_local(config)
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


def _looks_local(config: PipelineConfig) -> list[Finding]:
    local = [
        (str(p), kind)
        for p in shared_folders(config)
        if (kind := mount_type(p)) is not None and not _networked(kind)
    ]
    if not local:
        return []
    where = ", ".join(f"{path!r} ({kind})" for path, kind in local)
    return [
        Finding(
            "shared-storage-looks-local",
            Severity.WARNING,
            f"[spark] shared_storage is true, but on this host {where} is on a file system "
            "other hosts do not mount: unless every executor runs on this host, they will not "
            "see these folders",
            "move the folders onto the shared mount (NFS or a cluster file system), or run "
            "with every worker on this host",
            _SEE,
        )
    ]
