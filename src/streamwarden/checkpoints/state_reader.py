"""Reads a checkpoint's state through Spark's own data sources, without running the query.

Spark 4.2.0 offers two (verified against the pinned wheel):

- ``state-metadata``: one row per operator and state store: ``operatorId``, ``operatorName``,
  ``stateStoreName``, ``numPartitions``, ``minBatchId``, ``maxBatchId`` and, for
  transformWithState, ``operatorProperties`` (JSON: ``timeMode`` and each state variable's
  name, type and whether it has a TTL).
- ``statestore``: the rows of one store (``key``, ``value``, ``partition_id``). For
  transformWithState it needs ``stateVarName`` (one state variable), or ``readRegisteredTimers``
  (the registered timers: ``key``, ``expiration_timestamp_ms``); internal names starting with
  ``$`` are refused. Other operators take ``storeName`` (default ``default``).

Two quirks of 4.2.0 handled here: reading RocksDB state in a session that has never started a
streaming query fails (the reader reports to a ``StateStoreCoordinator`` that is only created
with the session's ``StreamingQueryManager``; :func:`prepare` creates it), and the reader may
leave zero-byte hidden ``*.tmp`` changelog files in partition folders
(:func:`leaving_no_trace` removes the ones a read created, so reading stays read-only).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from streamwarden.errors import StateError, StreamwardenError
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "OperatorState",
    "StateVariable",
    "count_rows",
    "leaving_no_trace",
    "list_operators",
    "plain_path",
    "prepare",
    "read_timers",
    "read_variable",
]

TIMER_STATE = "TimerState"
TWS_PREFIX = "transformWithState"


@dataclass(frozen=True)
class StateVariable:
    """One readable piece of an operator's state: a TWS state variable, or a whole store."""

    name: str
    kind: str  # ValueState / ListState / MapState for TWS, "store" for other operators
    ttl: bool = False


@dataclass(frozen=True)
class OperatorState:
    """A stateful operator as the ``state-metadata`` source describes it."""

    operator_id: int
    name: str
    stores: tuple[str, ...]
    partitions: int
    min_batch: int
    max_batch: int
    time_mode: str | None
    variables: tuple[StateVariable, ...]
    has_timers: bool

    @property
    def is_transform_with_state(self) -> bool:
        return self.name.startswith(TWS_PREFIX)


def prepare(spark: SparkSession) -> None:
    """Creates the session's state store coordinator, which the RocksDB reader reports to."""
    _ = spark.streams.active


def list_operators(spark: SparkSession, checkpoint: Path) -> list[OperatorState]:
    """The checkpoint's stateful operators, one entry each (stores grouped)."""
    rows = _guard(
        checkpoint,
        "read its operator metadata",
        lambda: spark.read.format("state-metadata").load(str(checkpoint)).collect(),
    )
    by_op: dict[int, list[Any]] = {}
    for row in rows:
        by_op.setdefault(int(row["operatorId"]), []).append(row)
    return [_operator(op_id, op_rows) for op_id, op_rows in sorted(by_op.items())]


def _operator(op_id: int, rows: list[Any]) -> OperatorState:
    first = rows[0]
    props: dict[str, Any] = {}
    if "operatorProperties" in first.asDict() and first["operatorProperties"]:
        props = json.loads(first["operatorProperties"])
    stores = tuple(str(r["stateStoreName"]) for r in rows)
    name = str(first["operatorName"])
    declared = props.get("stateVariables", [])
    if name.startswith(TWS_PREFIX):
        variables = tuple(
            StateVariable(str(v["stateName"]), str(v["stateVariableType"]), bool(v["ttlEnabled"]))
            for v in declared
            if v["stateVariableType"] != TIMER_STATE
        )
    else:
        variables = tuple(StateVariable(store, "store") for store in stores)
    return OperatorState(
        operator_id=op_id,
        name=name,
        stores=stores,
        partitions=max(int(r["numPartitions"]) for r in rows),
        min_batch=min(int(r["minBatchId"]) for r in rows),
        max_batch=max(int(r["maxBatchId"]) for r in rows),
        time_mode=props.get("timeMode"),
        variables=variables,
        has_timers=any(v["stateVariableType"] == TIMER_STATE for v in declared),
    )


def read_variable(
    spark: SparkSession,
    checkpoint: Path,
    op: OperatorState,
    var: StateVariable,
    batch_id: int | None = None,
) -> DataFrame:
    """Rows of one state variable (TWS) or store: ``key``, ``value``, ``partition_id``."""
    reader = spark.read.format("statestore").option("operatorId", op.operator_id)
    if op.is_transform_with_state:
        reader = reader.option("stateVarName", var.name)
    else:
        reader = reader.option("storeName", var.name)
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    frame: DataFrame = _guard(
        checkpoint, f"read state {var.name!r}", lambda: reader.load(str(checkpoint))
    )
    return frame


def read_timers(
    spark: SparkSession, checkpoint: Path, op: OperatorState, batch_id: int | None = None
) -> DataFrame:
    """The registered timers of a TWS operator: ``key``, ``expiration_timestamp_ms``."""
    reader = (
        spark.read.format("statestore")
        .option("operatorId", op.operator_id)
        .option("readRegisteredTimers", "true")
    )
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    frame: DataFrame = _guard(checkpoint, "read its timers", lambda: reader.load(str(checkpoint)))
    return frame


def count_rows(
    spark: SparkSession, checkpoint: Path, batch_id: int | None = None
) -> dict[str, int]:
    """Rows per operator and state variable (``"0/user_sessions"``, ``"0/timers"``)."""
    prepare(spark)
    counts: dict[str, int] = {}
    with leaving_no_trace(checkpoint) as readable:
        for op in list_operators(spark, readable):
            for var in op.variables:
                frame = read_variable(spark, readable, op, var, batch_id)
                counts[f"{op.operator_id}/{var.name}"] = _guard(
                    checkpoint, f"count state {var.name!r}", frame.count
                )
            if op.has_timers:
                frame = read_timers(spark, readable, op, batch_id)
                counts[f"{op.operator_id}/timers"] = _guard(
                    checkpoint, "count its timers", frame.count
                )
    return counts


@contextmanager
def plain_path(checkpoint: Path) -> Iterator[Path]:
    """Yields a path to ``checkpoint`` that Spark's offline state tools can use.

    Spark's state reader and its state repartition look up the commit log under the
    URL-encoded path, so a checkpoint whose path has a space (or another character that URL
    encoding changes) seems to have no committed batch. Such a checkpoint is reached through a
    symbolic link with a plain name, removed afterwards. A streamwarden error raised while the
    link is in use names the checkpoint's own path, not the link's."""
    target = Path(checkpoint).absolute()
    if quote(str(target)) == str(target):
        yield target
        return
    link_dir = Path(tempfile.mkdtemp(prefix="streamwarden-checkpoint-"))
    link = link_dir / "checkpoint"
    try:
        link.symlink_to(target, target_is_directory=True)
        yield link
    except StreamwardenError as exc:
        raise type(exc)(str(exc).replace(str(link), str(target))) from None
    finally:
        shutil.rmtree(link_dir, ignore_errors=True)


@contextmanager
def leaving_no_trace(checkpoint: Path) -> Iterator[Path]:
    """Yields the :func:`plain_path` to give Spark's state readers, and removes the empty
    hidden ``*.tmp`` files they create while reading."""
    state = Path(checkpoint) / "state"
    before = _temp_files(state)
    try:
        with plain_path(checkpoint) as readable:
            yield readable
    finally:
        for path in _temp_files(state) - before:
            if path.stat().st_size == 0:
                path.unlink(missing_ok=True)


def _temp_files(state: Path) -> set[Path]:
    return set(state.glob("*/*/.*.tmp")) if state.is_dir() else set()


def _guard(checkpoint: Path, what: str, call: Any) -> Any:
    try:
        return call()
    except Exception as exc:
        raise StateError(
            f"cannot {what} in checkpoint {str(checkpoint)!r}: {java_message(exc)}; the "
            "checkpoint may come from an older Spark or be damaged (details in the Spark log)"
        ) from None
