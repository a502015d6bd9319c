"""The history store contract, and the registry of store kinds that ``[history] kind`` selects.

A store keeps the latest revision of every closed session a pipeline emitted, one row per
session id: the session's fields (:data:`SESSION_FIELDS`: ``session_id``, ``key`` (the key's
value as text), ``start_ms``, ``end_ms``, ``event_count``, ``bytes``, ``revision``,
``truncated`` and ``state``, the engine's encoded aggregate state that a merge resumes from),
then one field per declared aggregate, its output value (for people and queries; a merge reads
only ``state``). Which aggregates, and what the sessions output calls the key and the state,
the operator says (:class:`StoredColumns`). A store answers one question,
:meth:`HistoryStore.lookup` (the stored sessions of some keys around some times), and takes one
kind of change, :meth:`HistoryStore.apply`: a batch's revised sessions and deletions, applied
exactly once per batch id together with what the batch wrote, so that a replayed batch changes
nothing and is given the same output (:meth:`HistoryStore.applied`). The Delta store's change
is the sessions sink's own MERGE of the batch (its :meth:`HistoryStore.apply` writes nothing).

A kind is a module beside this one, registered with ``HISTORY_KINDS.register``, with its own
settings model (``settings_model``) that the config validates ``[history]`` with; a kind
receives only those settings, the run's context and what the sessions operator tells it (the
:class:`StoredColumns`). This module imports neither pyspark nor the config, so that the config
can assemble itself from the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from streamwarden.registry import Registry
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext

__all__ = [
    "HISTORY_KINDS",
    "SESSION_FIELDS",
    "HistoryKind",
    "HistoryStore",
    "Row",
    "StoredAggregate",
    "StoredColumns",
    "Wanted",
]

#: The fields of every stored session, in the store's column order (the aggregates follow).
SESSION_FIELDS = (
    "session_id",
    "key",
    "start_ms",
    "end_ms",
    "event_count",
    "bytes",
    "revision",
    "truncated",
    "state",
)

#: A stored session or an output row, by field name.
Row = Mapping[str, Any]


@dataclass(frozen=True)
class StoredAggregate:
    """One declared aggregate as a store keeps it: its output column ``name`` and its Spark
    type in DDL (``bigint``, ``double``, ``string``, ``boolean``, ``timestamp``, ``date``,
    ``array<string>``...)."""

    name: str
    spark_type: str


@dataclass(frozen=True)
class StoredColumns:
    """What the sessions operator tells a store about the sessions it keeps: the key's column
    in the sessions output (``key_name``, the ``[schema]`` key's own name), the output column
    with each session's aggregate state (``state_name``), and the declared aggregates, in
    order. A store's sessions are :data:`SESSION_FIELDS` then the aggregates' names
    (:attr:`fields`)."""

    key_name: str
    state_name: str
    aggregates: tuple[StoredAggregate, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of a stored session, in the store's column order."""
        return (*SESSION_FIELDS, *(a.name for a in self.aggregates))


@dataclass(frozen=True)
class Wanted:
    """The stored sessions of ``key`` that reach into ``[from_ms, to_ms)``: those with
    ``end_ms >= from_ms`` and ``start_ms < to_ms``."""

    key: str
    from_ms: int
    to_ms: int


class HistoryStore(Protocol):
    """One pipeline's history of closed sessions, outside streaming state."""

    def lookup(self, wanted: Sequence[Wanted]) -> list[Row]:
        """The stored sessions each of ``wanted`` asks for (each once), with the fields of
        :attr:`StoredColumns.fields`."""
        ...

    def applied(self, run_id: str, batch_id: int) -> list[Row] | None:
        """The output rows of batch ``batch_id`` of the run ``run_id`` if :meth:`apply` took
        that batch before (a replay after a crash), else None. A store that can read itself as
        it was before a batch (the Delta table's time travel) may instead answer None for a
        replay and serve the :meth:`lookup` calls of that batch as of before it: the merge then
        runs again on the same input and, being deterministic, gives the same rows."""
        ...

    def apply(
        self,
        run_id: str,
        batch_id: int,
        sessions: Sequence[Row],
        deletions: Sequence[str],
        output: Sequence[Row],
    ) -> None:
        """In one transaction: each of ``sessions`` replaces the stored session of its id unless
        that one has an equal or higher revision (so a replay or reordering never moves a
        session back); the sessions ``deletions`` names (absorbed by a merge) are removed; and
        the batch is recorded with its ``output`` rows. A batch already recorded changes
        nothing."""
        ...

    def size(self) -> int:
        """How many sessions the store holds."""
        ...

    def close(self) -> None:
        """Releases what the store holds (its database connection); the run calls it when it
        ends, failed or not."""
        ...


class HistoryKind(Protocol):
    """One kind of history store: its settings model, what it needs, how to open it. Each
    method receives the kind's own settings, the run's context and, where it reads or writes
    sessions, the :class:`StoredColumns` the sessions operator declares."""

    #: The model of ``[history]`` for this kind.
    @property
    def settings_model(self) -> type[KindSettings]: ...

    def check_outputs(self, settings: KindSettings, outputs: Mapping[str, KindSettings]) -> None:
        """Raises ValueError if the pipeline's outputs do not fit this kind (at load, no I/O):
        the Delta store needs a Delta sessions sink."""
        ...

    def check(self, settings: KindSettings, context: RunContext, columns: StoredColumns) -> None:
        """Checks, before Spark starts, that the store can be reached and that the sessions it
        holds already have ``columns`` (a store written for other aggregates is refused);
        raises a :class:`~streamwarden.errors.StreamwardenError` saying what to do."""
        ...

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        """JVM jars Spark needs for this store, beyond the engine's."""
        ...

    def where(self, settings: KindSettings, context: RunContext) -> str:
        """Where the store is, as a run's start-up line shows it (never a secret)."""
        ...

    def open(
        self, settings: KindSettings, context: RunContext, columns: StoredColumns
    ) -> HistoryStore:
        """The store ``[history]`` configures, keeping sessions with ``columns``."""
        ...


#: The history store kinds, by the name ``[history] kind`` gives (``delta`` when none is).
HISTORY_KINDS: Registry[HistoryKind] = Registry("history store kind", "kinds", default="delta")
