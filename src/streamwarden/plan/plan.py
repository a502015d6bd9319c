"""A pipeline's plan: the operator, the source, each output's sink and the history store that its
config selects, each with its own settings and the run's context; the JVM jars and Spark settings
they need; and the checks each runs before Spark starts. Built once from a loaded config
(:meth:`PipelinePlan.of`), so that nothing is looked up, checked or built twice in a run.

What a run does with it (the run lock, the checkpoint's ownership, the query) is the runner's
(:mod:`streamwarden.pipeline.runner`); what ``doctor`` judges of it, the doctor's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.config.model import PipelineConfig
from streamwarden.errors import ConfigError
from streamwarden.history.base import HISTORY_KINDS, HistoryKind, StoredColumns
from streamwarden.operators.base import OPERATORS, Operator
from streamwarden.sinks.base import SinkKind, sink_kind
from streamwarden.sources.base import Source, source_of
from streamwarden.spark.permissions import with_umask

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Check", "PipelinePlan"]

#: A check run before Spark starts: what it checks (``"sink sessions"``), and the check, which
#: raises a :class:`~streamwarden.errors.StreamwardenError` saying what to do.
Check = tuple[str, Callable[[], None]]


@dataclass(frozen=True)
class PipelinePlan:
    """The parts of one config's pipeline (see the module's description)."""

    config: PipelineConfig
    operator: Operator
    source: Source
    #: Each output's sink kind, by output name (``dead_letters`` among them).
    sinks: Mapping[str, SinkKind]
    history: HistoryKind | None

    @classmethod
    def of(cls, config: PipelineConfig) -> PipelinePlan:
        """The plan of a loaded config (whose parts the loader has checked exist)."""
        return cls(
            config=config,
            operator=OPERATORS[config.operator],
            source=source_of(config.source),
            sinks={name: sink_kind(settings) for name, settings in config.sinks.items()},
            history=None if config.history is None else HISTORY_KINDS[config.history.kind],
        )

    @property
    def history_columns(self) -> StoredColumns:
        """What the history store keeps of the operator's sessions, as the operator says (its
        key's column, its aggregates); a :class:`~streamwarden.errors.ConfigError` for an
        operator that keeps no history."""
        columns = self.operator.history_columns(self.config)
        if columns is None:
            raise ConfigError(
                f"operator {self.config.operator!r} keeps no history: remove the [history] section"
            )
        return columns

    def checks(self) -> Iterator[Check]:
        """One check per part that reads or writes something outside the pipeline: the source,
        each sink, the history store; each needs its jars, then its server or folder."""
        config, context = self.config, self.config.context

        def source() -> None:
            self.source.jars(config.source, context)
            self.source.check(config.source, context)

        def sink(name: str, kind: SinkKind) -> Callable[[], None]:
            def check() -> None:
                kind.jars(config.sinks[name], context)
                kind.check(name, config.sinks[name], context)

            return check

        def history(kind: HistoryKind) -> Callable[[], None]:
            def check() -> None:
                assert config.history is not None
                kind.jars(config.history, context)
                kind.check(config.history, context, self.history_columns)

            return check

        yield "source", source
        for name, kind in self.sinks.items():
            yield f"sink {name}", sink(name, kind)
        if self.history is not None:
            yield "history store", history(self.history)

    def check_connections(self) -> None:
        """Raises the first problem of :meth:`checks` (its own error type and exit code)."""
        for _, check in self.checks():
            check()

    @cached_property
    def jars(self) -> tuple[str, ...]:
        """The JVM jars the parts need beyond the engine's, each once (found, or fetched into
        the user's cache, when first asked)."""
        config, context = self.config, self.config.context
        jars = list(self.source.jars(config.source, context))
        for name, kind in self.sinks.items():
            jars += kind.jars(config.sinks[name], context)
        if self.history is not None and config.history is not None:
            jars += self.history.jars(config.history, context)
        return tuple(dict.fromkeys(jars))

    def spark_conf(self) -> dict[str, str]:
        """The settings the SparkSession starts with: what the sinks need (Delta's extension),
        then ``[spark.conf]``, which wins."""
        conf: dict[str, str] = {}
        for name, kind in self.sinks.items():
            conf.update(kind.spark_conf(self.config.sinks[name], self.config.context))
        return {**conf, **self.config.spark.conf}

    def spark_session(self, log_file: Path | None = None) -> SparkSession:
        """The SparkSession of a run: the plan's jars and settings, files written with the
        config's umask; with ``log_file``, every log (Python's, PySpark's, the JVM's) goes
        there and not to the terminal."""
        from streamwarden.spark.log_file import spark_logging_to
        from streamwarden.spark.session import build_spark_session

        spark = self.config.spark
        conf = with_umask(self.spark_conf(), self.config.file_umask)
        name = f"streamwarden-{self.config.name}"
        if log_file is not None:
            return spark_logging_to(
                log_file,
                app_name=name,
                master=spark.master,
                shuffle_partitions=spark.shuffle_partitions,
                conf=conf,
                jars=self.jars,
            )
        return build_spark_session(
            app_name=name,
            master=spark.master,
            shuffle_partitions=spark.shuffle_partitions,
            extra_conf=conf,
            extra_jars=self.jars,
        )
