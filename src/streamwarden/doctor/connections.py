"""Can the pipeline reach what it reads and writes? Each source and sink kind checks itself
(``Source.check``, ``SinkKind.check``): a landing folder exists, a broker answers, its topics
exist, the connector jars are there. ``run`` calls :func:`check_connections` before Spark
starts, so the first problem stops it with its own error (an unreachable broker exits 1, a
missing topic 2); ``doctor`` reports every problem as a finding."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import (
    LandingMissingError,
    SourceError,
    StreamwardenError,
    UnreachableError,
)
from streamwarden.history.base import HISTORY_KINDS
from streamwarden.sinks.base import sink_kind
from streamwarden.sources.base import source_of

__all__ = [
    "check_connections",
    "collect_urls",
    "connection_findings",
    "required_jars",
    "session_conf",
]


def _checks(config: PipelineConfig) -> Iterator[tuple[str, Callable[[], None]]]:
    """(what, check) for the source and each sink; a check needs its jars, then its server."""

    context = config.context

    def source() -> None:
        kind = source_of(config.source)
        kind.jars(config.source, context)
        kind.check(config.source, context)

    def sink(name: str) -> Callable[[], None]:
        def check() -> None:
            settings = config.sinks[name]
            kind = sink_kind(settings)
            kind.jars(settings, context)
            kind.check(name, settings, context)

        return check

    def history() -> None:
        settings = config.history
        assert settings is not None
        kind = HISTORY_KINDS[settings.kind]
        kind.jars(settings, context)
        kind.check(settings, context, collect_urls(config))

    yield "source", source
    for name in config.sinks:
        yield f"sink {name}", sink(name)
    if config.history is not None:
        yield "history store", history


def collect_urls(config: PipelineConfig) -> bool:
    """Whether the operator's outputs carry URLs, which a history store then keeps."""
    return bool(getattr(config.section, "collect_urls", False))


def check_connections(config: PipelineConfig) -> None:
    """Raises the first problem of the source or a sink (its own error type and exit code)."""
    for _, check in _checks(config):
        check()


def connection_findings(config: PipelineConfig) -> list[Finding]:
    """Every problem of the source and the sinks with their servers and jars, one finding
    each. A landing folder that does not exist yet is not one: producers may make it before the
    run, which refuses it if they did not (``run`` checks it, exit 2)."""
    findings = []
    for what, check in _checks(config):
        try:
            check()
        except (SourceError, LandingMissingError):
            continue
        except StreamwardenError as exc:
            code = "unreachable" if isinstance(exc, UnreachableError) else "io-setup"
            findings.append(
                Finding(
                    f"{what.replace(' ', '-')}-{code}",
                    Severity.ERROR,
                    str(exc),
                    "fix what the message names, then run again",
                )
            )
    return findings


def required_jars(config: PipelineConfig) -> tuple[str, ...]:
    """The JVM jars the source and sinks need beyond the engine's, each once."""
    context = config.context
    jars = list(source_of(config.source).jars(config.source, context))
    for sink in config.sinks.values():
        jars += sink_kind(sink).jars(sink, context)
    if config.history is not None:
        jars += HISTORY_KINDS[config.history.kind].jars(config.history, context)
    return tuple(dict.fromkeys(jars))


def session_conf(config: PipelineConfig) -> dict[str, str]:
    """The settings the SparkSession starts with: what the sinks need (Delta's extension),
    then ``[spark.conf]``, which wins."""
    conf: dict[str, str] = {}
    for sink in config.sinks.values():
        conf.update(sink_kind(sink).spark_conf(sink, config.context))
    return {**conf, **config.spark.conf}
