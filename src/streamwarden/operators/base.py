"""The operator contract: what the runner, the console, the ownership check and the summary
need from an operator, and the registry that finds one by the config's ``operator`` name.

An operator is one object (:class:`Operator`) in its own package, registered at the end of
its module with ``OPERATORS.register`` (and imported by ``streamwarden.operators``). Its
config section is ``[<name>]``, validated by the operator's own model (``settings_model``, an
:class:`~streamwarden.operators.settings.OperatorSettings` in ``<name>/settings.py``), which
also declares the operator's outputs, checked at load against ``[sinks.<output>]``. An operator
reads the pipeline through :class:`PipelineView`, never the config's type.
Everything else about the operator is here: its step over the source's records, its per-batch
stats, its watermark delay and drain horizon, what its checkpoint's state depends on, and how
its outputs account for the records that went in. Nothing outside its package branches on the
operator's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from streamwarden.errors import ConfigError
from streamwarden.history.base import StoredColumns
from streamwarden.operators.settings import OperatorSettings
from streamwarden.registry import Registry
from streamwarden.schema.model import Schema
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.sinks.base import STANDALONE, OutputShape, open_sink
from streamwarden.sinks.writer import BatchWriter, Prepare
from streamwarden.validation.settings import ValidationConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "OPERATORS",
    "Accounting",
    "BatchStats",
    "Batches",
    "Operator",
    "OperatorQuery",
    "OperatorStep",
    "Outputs",
    "PipelineView",
    "WithBadFiles",
    "account_run",
    "operator_of",
    "writer_for",
]


class BatchStats(Protocol):
    """What one micro-batch of an operator did, read from its progress's observed metrics."""

    @property
    def batch_id(self) -> int: ...

    @property
    def dead_letters(self) -> dict[str, int]:
        """Dead letters written by reason (non-zero counts only)."""
        ...

    def output_counts(self) -> dict[str, int]:
        """Rows written per output (``OperatorSettings.all_outputs``), dead letters aside."""
        ...


class Accounting(Protocol):
    """Where the records of a run went, reconciled from its outputs."""

    @property
    def balanced(self) -> bool:
        """True when no record was lost or doubled."""
        ...

    def describe(self) -> str:
        """One line: each number after its label, and the verdict."""
        ...


@dataclass(frozen=True)
class OperatorStep:
    """An operator over a source's records: its output (one DataFrame, rows told apart by
    ``kind``, counts attached with ``observe``) and the ``foreachBatch`` writer to its sinks."""

    output: DataFrame
    writer: BatchWriter


class OperatorQuery(Protocol):
    """An operator's query as a Python user builds it (``sessionize``, ``detect``): what a
    runner needs to run it as a pipeline runs its operator (``run_query``)."""

    #: The operator's registered name: its per-batch stats are read as a pipeline's are.
    operator: str

    @property
    def watermark_delay(self) -> timedelta:
        """The watermark is the latest event time minus this."""
        ...

    @property
    def drain_horizon(self) -> timedelta:
        """How far past the latest event time every state of the query has expired."""
        ...

    def state_identity(self) -> dict[str, Any]:
        """What the layout of the query's stored state depends on: a checkpoint written under
        one identity is refused under another."""
        ...

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        """The same query with the idle ticks (``pipeline.idle.read_ticks``) among its events,
        counted as a pipeline's step is, and its writer to ``context``'s sinks by output name."""
        ...


#: What each configured sink holds, by sink name (None: nothing yet).
Outputs = Mapping[str, "DataFrame | None"]
Batches = Sequence[BatchStats]


class PipelineView(Protocol):
    """What an operator reads of its pipeline: its own section, the records' schema,
    validation's settings, the
    source's and history store's settings (for what they change in its outputs) and the run's
    context (the outputs' sinks among it). The pipeline config meets it."""

    @property
    def operator(self) -> str: ...

    @property
    def section(self) -> OperatorSettings: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def schemas(self) -> Mapping[str, Schema]:
        """Each source's schema, by source name, when the pipeline reads several."""
        ...

    @property
    def validation(self) -> ValidationConfig: ...

    @property
    def source(self) -> KindSettings: ...

    @property
    def history(self) -> KindSettings | None: ...

    @property
    def context(self) -> RunContext: ...


class Operator(Protocol):
    """One stateful operator of a pipeline, selected by ``operator = <name>``."""

    #: The config's ``operator`` value, and the name of its config section.
    name: str

    #: The model of its ``[<name>]`` section, which declares its outputs.
    @property
    def settings_model(self) -> type[OperatorSettings]: ...

    #: Why a change of :meth:`state_identity` is refused, and what the old state holds.
    state_change: str

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        """How long quiet input waits before the idle ticker moves event time (None: off)."""
        ...

    def watermark_delay(self, config: PipelineView) -> timedelta:
        """The watermark is the latest event time minus this."""
        ...

    def drain_horizon(self, config: PipelineView) -> timedelta:
        """How far past the latest event time every state of the operator has expired."""
        ...

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        """What the layout of the operator's stored state depends on (beyond its name): a
        checkpoint written under one identity is refused under another."""
        ...

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        """What a history store keeps of the operator's sessions (key column, state column,
        aggregates and their types); None: the operator keeps no history."""
        ...

    def check(self, config: PipelineView) -> None:
        """Checks what the config model cannot (e.g. a pattern's structure) before Spark
        starts; raises :class:`~streamwarden.errors.ConfigError`."""
        ...

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        """The operator over ``records`` (one ``raw`` string column and the tick marker)."""
        ...

    def stats_from_progress(self, progress: dict[str, Any]) -> BatchStats | None:
        """The batch's counts from its progress; None if it carries none."""
        ...

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> Accounting:
        """Reconciles the ``outputs`` of ``config``'s run (as :func:`account_run` reads them
        back) with the ``records`` that went in; ``batches`` are the stats of the run's batches,
        for what only the run observed."""
        ...


Select = Callable[["DataFrame"], "DataFrame"]


def writer_for(
    context: RunContext,
    selectors: Mapping[str, Select],
    shapes: Mapping[str, OutputShape] | None = None,
    prepare: Prepare | None = None,
) -> BatchWriter:
    """A writer to each of the run's sinks that ``selectors`` names (in their order): the sink
    ``[sinks.<name>]`` of its kind, fed the rows ``selectors[name]`` picks from the batch's
    output (after ``prepare``, if given), whose shape is ``shapes[name]`` (an output not named
    there is rows that each stand alone)."""
    shapes = shapes or {}
    return BatchWriter(
        [
            (open_sink(name, context, shapes.get(name, STANDALONE)), select)
            for name, select in selectors.items()
            if name in context.outputs
        ],
        prepare,
    )


#: The operators, by the name ``operator`` gives (``sessions`` when none is); each registers
#: itself in its own module.
OPERATORS: Registry[Operator] = Registry("operator", "operators", default="sessions")


def account_run(
    spark: SparkSession, config: PipelineView, records: int, batches: Batches = ()
) -> Accounting:
    """Reconciles the outputs of ``config``'s pipeline, read back from every configured sink,
    with the ``records`` that went in."""
    context = config.context
    outputs = {name: open_sink(name, context).read(spark) for name in context.outputs}
    accounting = operator_of(config).account(config, outputs, records, batches)
    landing = getattr(config.source, "path", None)  # a source with a landing folder
    if not isinstance(landing, Path):
        return accounting
    from streamwarden.sources.landing_guard import bad_files

    bad = bad_files(landing)
    if not bad:
        return accounting
    counts = [b.records for b in bad]
    counted = None if None in counts else sum(c or 0 for c in counts)
    return WithBadFiles(accounting, records, counted, len(bad))


@dataclass(frozen=True)
class WithBadFiles:
    """An operator's accounting with the ``bad_file`` term: records in landing files the
    source set aside unread (``<landing>/_quarantine/bad_files.jsonl``). Those are not input
    records (Spark never read them), so the balance is the operator's; the line shows where
    every record that landed went."""

    accounting: Accounting
    read: int
    #: Records counted in the bad files; None when one of them could not be counted.
    bad_file: int | None
    files: int

    @property
    def balanced(self) -> bool:
        return self.accounting.balanced

    def describe(self) -> str:
        if self.bad_file is None:
            landed = f"records landed: read {self.read} + bad_file (uncounted)"
        else:
            landed = f"records landed {self.read + self.bad_file} = read {self.read} + bad_file "
            landed += str(self.bad_file)
        return (
            f"{landed} (in {self.files} landing file(s) set aside unread, listed in "
            f"_quarantine/bad_files.jsonl); {self.accounting.describe()}"
        )


def operator_of(config: PipelineView) -> Operator:
    """The operator a config selects (the config model has checked that it exists)."""
    try:
        return OPERATORS[config.operator]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
