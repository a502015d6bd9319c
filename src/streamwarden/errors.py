"""The exceptions streamwarden raises, under one root so callers can catch them all.

Every message names the thing that was wrong, shows the bad value, and says what to do. The CLI
maps :class:`UsageError` subclasses to exit code 2 and everything else to exit code 1.

``restartable`` says whether ``streamwarden run``'s supervisor may restart the query after the
error: a restart replays the same config, checkpoint and code, so an error that these decide
(a bad config, a checkpoint of another pipeline, a missing engine, a query that cannot even
start) would only fail again, and is reported at once instead.
"""

from __future__ import annotations

__all__ = [
    "CheckpointInUseError",
    "ConfigError",
    "EngineError",
    "HistoryError",
    "LandingMissingError",
    "LocalBrokerError",
    "LocalServerError",
    "MonitoringError",
    "NotACheckpointError",
    "PatternError",
    "PatternMissError",
    "PipelineError",
    "QueryStartError",
    "RestartsExhaustedError",
    "SinkError",
    "SinkTopicGoneError",
    "SourceError",
    "SourceRecordsLostError",
    "StateError",
    "StreamwardenError",
    "UnreachableError",
    "UsageError",
]


class StreamwardenError(Exception):
    """Root of all streamwarden errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 1
    restartable = True


class UsageError(StreamwardenError):
    """The user asked for something impossible: bad arguments, bad config. Exit code 2."""

    exit_code = 2
    restartable = False


class ConfigError(UsageError):
    """A config file or config value is invalid."""


class LandingMissingError(ConfigError):
    """The landing folder a files source names is missing (or is a file): a config error."""


class PatternError(UsageError):
    """A pattern cannot be compiled: the message names the stage and the fix."""


class SourceError(StreamwardenError):
    """A source cannot be read (missing landing directory, unreadable files)."""


class SinkError(StreamwardenError):
    """A sink cannot be written (a broker refused a transaction, a topic is gone)."""


class SinkTopicGoneError(SinkError):
    """A sink's Kafka topic was deleted under the running pipeline. Not restarted: no restart
    brings the topic back; the message says how to go on."""

    restartable = False


class UnreachableError(StreamwardenError):
    """A server the pipeline needs (a Kafka broker) did not answer. Exit code 1: it may be
    down for now, and a later run (or the supervisor) can succeed without a change."""


class EngineError(StreamwardenError):
    """The Java engine is missing or failed; the message says how to rebuild or what failed.
    Not restarted: a missing or mismatched jar stays missing until it is rebuilt."""

    restartable = False


class StateError(StreamwardenError):
    """A checkpoint or its state cannot be used with this pipeline. Not restarted: a checkpoint
    of another pipeline, or one in use by another run, stays so until a person acts."""

    restartable = False


class MonitoringError(StreamwardenError):
    """A running pipeline's status or metrics cannot be reached or read."""


class PipelineError(StreamwardenError):
    """A streaming query failed while running; details are in the log."""


class SourceRecordsLostError(PipelineError):
    """A batch failed because records its checkpoint planned are gone from the source (deleted
    from Kafka by retention, a landing file deleted after it was listed). Not restarted: the
    same batch would fail the same way until a person decides (the message says how)."""

    restartable = False


class PatternMissError(PipelineError):
    """A pattern's ``skip_to_first``/``skip_to_last`` with ``throw_on_miss`` found no event of its
    stage in a match, and the user asked for the query to stop then (as a Flink job fails). Not
    restarted: the same events would miss again; the message names the key and the stage."""

    restartable = False


class QueryStartError(PipelineError):
    """The query could not even start (Spark refused its plan: a bad condition, a column that
    is not there). Not restarted: the same plan is refused again."""

    restartable = False


class RestartsExhaustedError(PipelineError):
    """The supervisor spent its restart budget (``[supervisor] max_restarts`` within
    ``window``); the message lists the failures."""

    restartable = False


class NotACheckpointError(UsageError):
    """A path given as a checkpoint is missing or is not a streaming checkpoint. Exit code 2."""


class CheckpointInUseError(StateError):
    """A query is running on the checkpoint, so an offline tool must not change it."""


class LocalBrokerError(StreamwardenError):
    """The local Kafka broker (tests, demo) did not start or refused a request; the message
    names the broker's log."""


class LocalServerError(StreamwardenError):
    """A local server for tests and demos (PostgreSQL) did not start; the message says what it
    printed."""


class HistoryError(StreamwardenError):
    """The history store cannot be read or written (a refused login, a failed transaction)."""
