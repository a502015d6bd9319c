"""A pipeline's several sources (``[sources.<name>]``) read as one stream: each source's
records marked with its name (:data:`~streamwarden.sources.base.SOURCE_NAME`), each source doing
its own upkeep on its own part of the checkpoint (``sources/<index>``, in the order of the
config), so that every kind of source works beside any other unchanged.

The columns a source adds beside ``raw`` (its own event time, key and position) travel under
the source's name (``source_time_ms:payments``): in one stream, a source without them would
otherwise get them null (a Kafka source's time beside a files source would leave the files'
records with no time). :func:`records_of` gives one source's records with its own columns
under their usual names, for validation against its schema."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING, Any

from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.sources.base import (
    SOURCE_KEY,
    SOURCE_NAME,
    SOURCE_POSITION,
    SOURCE_TIME,
    SeveralSources,
    Source,
    source_of,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["SEVERAL", "Several", "records_of"]

#: The columns a source may add beside ``raw``: each travels under its source's name.
_OWN = (SOURCE_TIME, SOURCE_KEY, SOURCE_POSITION)


def _named(frame: DataFrame, name: str) -> DataFrame:
    """A source's records marked with its name, its own columns under it."""
    from pyspark.sql import functions as F

    return frame.select(
        *[F.col(c).alias(f"{c}:{name}") if c in _OWN else F.col(c) for c in frame.columns],
        F.lit(name).alias(SOURCE_NAME),
    )


def records_of(records: DataFrame, name: str, *, also: Column | None = None) -> DataFrame:
    """The records of source ``name`` (and the rows ``also`` marks, such as the idle ticks) out
    of a pipeline's records from several sources, with that source's own columns under their
    usual names and without the other sources'."""
    from pyspark.sql import functions as F

    mine = F.col(SOURCE_NAME) == name
    if also is not None:
        mine = mine | also
    columns = []
    for c in records.columns:
        own, _, source = c.rpartition(":")
        if own in _OWN:
            if source == name:
                columns.append(F.col(f"`{c}`").alias(own))
        else:
            columns.append(F.col(f"`{c}`"))
    return records.where(mine).select(*columns)


class Several:
    """The :class:`~streamwarden.sources.base.Source` of :class:`SeveralSources`."""

    change_effect = (
        "reads other sources, or the same ones in another order: its offsets would be read "
        "for other records"
    )
    settings_model = SeveralSources

    def each(
        self, settings: KindSettings, context: RunContext
    ) -> Iterator[tuple[str, Source, KindSettings, RunContext]]:
        """Each source: its name, kind, settings, and the context that gives its index."""
        assert isinstance(settings, SeveralSources)
        for index, (name, own) in enumerate(settings.named.items()):
            yield name, source_of(own), own, replace(context, source_index=index)

    def check(self, settings: KindSettings, context: RunContext) -> None:
        for _, source, own, ctx in self.each(settings, context):
            source.check(own, ctx)

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        jars: list[str] = []
        for _, source, own, ctx in self.each(settings, context):
            jars += [j for j in source.jars(own, ctx) if j not in jars]
        return tuple(jars)

    def read(self, spark: SparkSession, settings: KindSettings, context: RunContext) -> DataFrame:

        frames = [
            _named(source.read(spark, own, ctx), name)
            for name, source, own, ctx in self.each(settings, context)
        ]
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)

    def batch_input(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, batch: int
    ) -> DataFrame:

        frames = [
            _named(source.batch_input(spark, own, ctx, batch), name)
            for name, source, own, ctx in self.each(settings, context)
        ]
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)

    def sample(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, limit: int
    ) -> DataFrame | None:

        frames = []
        for name, source, own, ctx in self.each(settings, context):
            sample = source.sample(spark, own, ctx, limit)
            if sample is not None:
                frames.append(_named(sample, name))
        if not frames:
            return None
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)

    def before_start(self, settings: KindSettings, context: RunContext) -> None:
        for _, source, own, ctx in self.each(settings, context):
            source.before_start(own, ctx)

    def after_batch(self, settings: KindSettings, context: RunContext) -> None:
        for _, source, own, ctx in self.each(settings, context):
            source.after_batch(own, ctx)

    def account(
        self, settings: KindSettings, context: RunContext, progress: dict[str, Any]
    ) -> dict[str, Any]:
        for _, source, own, ctx in self.each(settings, context):
            progress = source.account(own, ctx, progress)
        return progress

    def sweep(self, settings: KindSettings, context: RunContext) -> list[str]:
        lines = []
        for name, source, own, ctx in self.each(settings, context):
            lines += [f"[sources.{name}] {line}" for line in source.sweep(own, ctx)]
        return lines

    def where(self, settings: KindSettings) -> str:
        assert isinstance(settings, SeveralSources)
        return "; ".join(
            f"{name}: {source_of(own).where(own)}" for name, own in settings.named.items()
        )

    def advice(self, settings: KindSettings, cause: str) -> str | None:
        assert isinstance(settings, SeveralSources)
        for name, own in settings.named.items():
            advice = source_of(own).advice(own, cause)
            if advice is not None:
                return f"[sources.{name}] {advice}"
        return None

    def identity(self, settings: KindSettings) -> dict[str, str]:
        assert isinstance(settings, SeveralSources)
        return {
            f"{name}.{key}": value
            for name, own in settings.named.items()
            for key, value in source_of(own).identity(own).items()
        }

    def describe(self, identity: dict[str, str]) -> str:
        return ", ".join(f"{key} {value!r}" for key, value in sorted(identity.items()))


SEVERAL = Several()
SeveralSources.implementation = SEVERAL
