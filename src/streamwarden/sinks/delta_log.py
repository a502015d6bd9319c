"""Reading a Delta table's transaction log without Spark: which batch of a pipeline the table
holds last, and what each commit recorded.

A Delta table's ``_delta_log/`` holds one JSON file per commit (``NNNNNNNNNNNNNNNNNNNN.json``,
one action per line) and, every few commits, a checkpoint of the whole state (a Parquet file,
``N.checkpoint.parquet``, or its parts ``N.checkpoint.i.n.parquet``; a V2 checkpoint,
``N.checkpoint.<uuid>.json|parquet``, keeps its transaction actions in that top-level file).
Old commit files are cleaned up after the log's retention, so the last transaction of an
application is the newest one among the latest checkpoint and the commits after it.

A writer that commits with ``txnAppId``/``txnVersion`` adds a ``txn`` action ``{"appId",
"version"}``; Delta skips a later commit of the same application with a version not above it.
The sinks record the pipeline's identity and the batch id there (``sinks.delta``), which is how
they, and the ownership check, know which batches a table holds without a SparkSession.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

__all__ = [
    "Commit",
    "columns",
    "commit_of",
    "commits",
    "last_transaction",
    "log_dir",
    "newest_commit_of",
]

_COMMIT = re.compile(r"^(\d{20})\.json$")
#: ``N.checkpoint.parquet``, a part ``N.checkpoint.i.n.parquet``, or V2 ``N.checkpoint.<uuid>.*``
_CHECKPOINT = re.compile(
    r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?(?:\.[0-9a-f-]{36})?\.(parquet|json)$"
)


def log_dir(table: Path) -> Path:
    return table / "_delta_log"


@dataclass(frozen=True)
class Commit:
    """One commit file of the log: its version, the transactions it recorded (application id
    -> version), its operation (``WRITE``, ``MERGE``, ``OPTIMIZE``...) and the data files it
    added (paths relative to the table, decoded)."""

    version: int
    transactions: dict[str, int] = field(default_factory=dict)
    operation: str | None = None
    added: tuple[str, ...] = ()
    #: The operation's figures (``commitInfo.operationMetrics``: a MERGE's ``numSourceRows``,
    #: ``numTargetRowsMatchedUpdated``...), as integers.
    metrics: dict[str, int] = field(default_factory=dict)


def commits(table: Path) -> list[Commit]:
    """Every commit whose file is still in the log, oldest first."""
    folder = log_dir(table)
    if not folder.is_dir():
        return []
    found = sorted((int(m.group(1)), f) for f in folder.iterdir() if (m := _COMMIT.match(f.name)))
    return [_read_commit(version, path) for version, path in found]


def last_transaction(table: Path, app_id: str) -> int | None:
    """The version the application ``app_id`` committed last to the table at ``table`` (None:
    no commit of it, or no table)."""
    folder = log_dir(table)
    if not folder.is_dir():
        return None
    checkpoint_version, last = _from_checkpoint(folder, app_id)
    for commit in commits(table):
        if commit.version > checkpoint_version and app_id in commit.transactions:
            last = commit.transactions[app_id]
    return last


def commit_of(table: Path, app_id: str, version: int) -> int | None:
    """The table version whose commit recorded the transaction ``version`` of ``app_id`` (None:
    none whose commit file is still in the log). Cheap when the application's last transaction
    is older (the usual case: a batch not yet written); else the log is read newest first."""
    last = last_transaction(table, app_id)
    if last is None or last < version:
        return None
    folder = log_dir(table)
    found = sorted((int(m.group(1)), f) for f in folder.iterdir() if (m := _COMMIT.match(f.name)))
    for number, path in reversed(found):
        transactions = _read_commit(number, path).transactions
        if transactions.get(app_id) == version:
            return number
        if transactions.get(app_id, version) < version:
            return None  # older transactions of the app only from here on
    return None


def newest_commit_of(table: Path, app_id: str) -> Commit | None:
    """The newest commit that recorded a transaction of ``app_id`` (None: none whose commit
    file is still in the log), read newest first: cheap right after the application wrote."""
    folder = log_dir(table)
    if not folder.is_dir():
        return None
    found = sorted((int(m.group(1)), f) for f in folder.iterdir() if (m := _COMMIT.match(f.name)))
    for number, path in reversed(found):
        commit = _read_commit(number, path)
        if app_id in commit.transactions:
            return commit
    return None


def columns(table: Path) -> list[str] | None:
    """The names of the table's top-level columns, from its latest schema (``metaData``), or
    None when there is no table."""
    folder = log_dir(table)
    if not folder.is_dir():
        return None
    schema = None
    checkpoint_version = -1
    for version, path in _checkpoint_files(folder):
        checkpoint_version, schema = version, _checkpoint_schema(path) or schema
    for commit_file in sorted(f for f in folder.iterdir() if _COMMIT.match(f.name)):
        if int(commit_file.name[:20]) > checkpoint_version:
            for action in _json_lines(commit_file):
                if "metaData" in action:
                    schema = action["metaData"]["schemaString"]
    if schema is None:
        return None
    return [f["name"] for f in json.loads(schema)["fields"]]


def _read_commit(version: int, path: Path) -> Commit:
    transactions: dict[str, int] = {}
    operation = None
    added = []
    metrics: dict[str, int] = {}
    for action in _json_lines(path):
        if "txn" in action:
            transactions[action["txn"]["appId"]] = int(action["txn"]["version"])
        elif "commitInfo" in action:
            operation = action["commitInfo"].get("operation")
            figures = action["commitInfo"].get("operationMetrics") or {}
            metrics = {k: int(v) for k, v in figures.items() if str(v).lstrip("-").isdigit()}
        elif "add" in action:
            added.append(unquote(action["add"]["path"]))
    return Commit(version, transactions, operation, tuple(added), metrics)


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _from_checkpoint(folder: Path, app_id: str) -> tuple[int, int | None]:
    """(version of the latest complete checkpoint, or -1; the app's version in it)."""
    checkpoint_version, last = -1, None
    for version, path in _checkpoint_files(folder):
        checkpoint_version = version
        for txn in _checkpoint_actions(path, "txn"):
            if txn.get("appId") == app_id:
                last = int(txn["version"])
    return checkpoint_version, last


def _checkpoint_files(folder: Path) -> list[tuple[int, Path]]:
    """The files of the latest complete checkpoint (none: no checkpoint), with its version."""
    by_version: dict[int, list[tuple[Path, int]]] = {}
    for f in folder.iterdir():
        if m := _CHECKPOINT.match(f.name):
            by_version.setdefault(int(m.group(1)), []).append((f, int(m.group(3) or 1)))
    for version in sorted(by_version, reverse=True):
        files = by_version[version]
        if len(files) >= files[0][1]:  # else a multi-part checkpoint still being written
            return [(version, path) for path, _ in files]
    return []


def _checkpoint_schema(path: Path) -> str | None:
    return next((m["schemaString"] for m in _checkpoint_actions(path, "metaData")), None)


def _checkpoint_actions(path: Path, kind: str) -> list[dict[str, Any]]:
    """The actions of one kind (``txn``, ``metaData``) in a checkpoint file."""
    if path.suffix == ".json":
        return [a[kind] for a in _json_lines(path) if kind in a]
    import pyarrow.parquet as pq  # here: reading commits alone must not load pyarrow

    schema = pq.read_schema(path)
    if kind not in schema.names:
        return []
    column = pq.read_table(path, columns=[kind]).column(kind).to_pylist()
    return [t for t in column if t is not None]
