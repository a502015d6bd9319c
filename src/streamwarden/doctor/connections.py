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

__all__ = ["check_connections", "connection_findings", "required_jars", "session_conf"]


def _checks(config: PipelineConfig) -> Iterator[tuple[str, Callable[[], None]]]:
    """(what, check) for the source and each sink; a check needs its jars, then its server."""

    def source() -> None:
        kind = source_of(config.source)
        kind.jars(config)
        kind.check(config)

    def sink(name: str) -> Callable[[], None]:
        def check() -> None:
            kind = sink_kind(config.sinks.configured()[name])
            kind.jars(config)
            kind.check(name, config)

        return check

    def history() -> None:
        assert config.history is not None
        kind = HISTORY_KINDS[config.history.kind]
        kind.jars(config)
        kind.check(config)

    yield "source", source
    for name in config.sinks.configured():
        yield f"sink {name}", sink(name)
    if config.history is not None:
        yield "history store", history


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
    jars = list(source_of(config.source).jars(config))
    for sink in config.sinks.configured().values():
        jars += sink_kind(sink).jars(config)
    if config.history is not None:
        jars += HISTORY_KINDS[config.history.kind].jars(config)
    return tuple(dict.fromkeys(jars))


def session_conf(config: PipelineConfig) -> dict[str, str]:
    """The settings the SparkSession starts with: what the sinks need (Delta's extension),
    then ``[spark.conf]``, which wins."""
    conf: dict[str, str] = {}
    for sink in config.sinks.configured().values():
        conf.update(sink_kind(sink).spark_conf(config))
    return {**conf, **config.spark.conf}
