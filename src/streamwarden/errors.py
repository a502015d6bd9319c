"""The exceptions streamwarden raises, under one root so callers can catch them all.

Every message names the thing that was wrong, shows the bad value, and says what to do. The CLI
maps :class:`UsageError` subclasses to exit code 2 and everything else to exit code 1.
"""

from __future__ import annotations

__all__ = [
    "CheckpointInUseError",
    "ConfigError",
    "EngineError",
    "LocalBrokerError",
    "MonitoringError",
    "NotACheckpointError",
    "PatternError",
    "PipelineError",
    "SinkError",
    "SourceError",
    "StateError",
    "StreamwardenError",
    "UnreachableError",
    "UsageError",
]


class StreamwardenError(Exception):
    """Root of all streamwarden errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(StreamwardenError):
    """The user asked for something impossible: bad arguments, bad config. Exit code 2."""

    exit_code = 2


class ConfigError(UsageError):
    """A config file or config value is invalid."""


class PatternError(UsageError):
    """A pattern cannot be compiled: the message names the stage and the fix."""


class SourceError(StreamwardenError):
    """A source cannot be read (missing landing directory, unreadable files)."""


class SinkError(StreamwardenError):
    """A sink cannot be written (a broker refused a transaction, a topic is gone)."""


class UnreachableError(StreamwardenError):
    """A server the pipeline needs (a Kafka broker) did not answer. Exit code 1: it may be
    down for now, and a later run (or the supervisor) can succeed without a change."""


class EngineError(StreamwardenError):
    """The Java engine is missing or failed; the message says how to rebuild or what failed."""


class StateError(StreamwardenError):
    """A checkpoint or its state cannot be used with this pipeline."""


class MonitoringError(StreamwardenError):
    """A running pipeline's status or metrics cannot be reached or read."""


class PipelineError(StreamwardenError):
    """A streaming query failed while running; details are in the log."""


class NotACheckpointError(UsageError):
    """A path given as a checkpoint is missing or is not a streaming checkpoint. Exit code 2."""


class CheckpointInUseError(StateError):
    """A query is running on the checkpoint, so an offline tool must not change it."""


class LocalBrokerError(StreamwardenError):
    """The local Kafka broker (tests, demo) did not start or refused a request; the message
    names the broker's log."""
