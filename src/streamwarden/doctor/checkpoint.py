"""The checks ``doctor`` makes on a pipeline's existing checkpoint: what it pins (its state
partition count), and log files Spark would trip over at restart with a message that does not
say what to do (a checksum left without its file, a file cut short).
"""

from __future__ import annotations

from streamwarden.checkpoints.cut_logs import cut_log_fix, cut_logs
from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import NotACheckpointError, StreamwardenError

__all__ = [
    "check_checkpoint_logs",
    "check_checkpoint_partitions",
    "check_cut_logs",
    "pinned_partitions",
]


def pinned_partitions(config: PipelineConfig) -> int | None:
    """The state partition count the config's existing checkpoint pins; None before a first
    run. Raises :class:`StateError` for a damaged checkpoint."""
    if not config.checkpoint.path.is_dir():
        return None
    try:
        return CheckpointFiles(config.checkpoint.path).shuffle_partitions()
    except NotACheckpointError:  # an empty folder made ahead of the first run
        return None


def check_checkpoint_partitions(config: PipelineConfig) -> list[Finding]:
    """A checkpoint pins its state partition count: Spark takes it over the session's
    ``spark.sql.shuffle.partitions``, so a config that says otherwise is silently ignored."""
    try:
        pinned = pinned_partitions(config)
    except StreamwardenError as exc:  # Spark would fail on it too, with a less useful message
        return [
            Finding(
                "checkpoint-damaged",
                Severity.ERROR,
                str(exc).split("; ")[0],
                "restore the checkpoint from a copy, or point checkpoint.path at a new folder",
                "L9",
            )
        ]
    path = config.checkpoint.path
    wanted = config.spark.shuffle_partitions
    if pinned is None or pinned == wanted:
        return []
    return [
        Finding(
            "partitions-pinned-by-checkpoint",
            Severity.WARNING,
            f"spark.shuffle_partitions = {wanted}, but the checkpoint at {str(path)!r} holds its "
            f"state in {pinned} partitions, and Spark keeps those: the setting is ignored",
            f"set shuffle_partitions = {pinned} to match, or change the count with "
            f"`streamwarden rescale {path} --partitions {wanted}` while the pipeline is stopped",
            "L11",
        )
    ]


def check_checkpoint_logs(config: PipelineConfig) -> list[Finding]:
    """Checksum files left without their log file (``commits/N`` deleted by hand, its hidden
    ``.N.crc`` not): Spark then fails batch N with a message about concurrent queries."""
    if not config.checkpoint.path.is_dir():
        return []
    try:
        orphans = CheckpointFiles(config.checkpoint.path).orphan_checksums()
    except NotACheckpointError:
        return []
    if not orphans:
        return []
    names = ", ".join(str(p) for p in orphans)
    return [
        Finding(
            "checkpoint-orphan-checksum",
            Severity.ERROR,
            f"checksum file(s) without their log file in the checkpoint: {names}; Spark cannot "
            "write that batch's file beside one and fails with \"Multiple streaming queries are "
            'concurrently using", which is not the cause',
            f"delete {names} (left behind when a log file was deleted by hand; nothing reads "
            "it), then run again",
            "L16",
        )
    ]


def check_cut_logs(config: PipelineConfig) -> list[Finding]:
    """Log files Spark cannot read back (empty or cut short, as a power loss right after Spark
    renamed them can leave): Spark refuses to restart with "Incomplete log file" and no advice.
    Whether deleting one is safe depends on what its batch already wrote
    (:mod:`streamwarden.checkpoints.cut_logs`)."""
    cut = cut_logs(config)
    if not cut:
        return []
    names = ", ".join(str(c.path) for c in cut)
    return [
        Finding(
            "checkpoint-cut-log",
            Severity.ERROR,
            f"checkpoint log file(s) cut short (empty, or missing the lines Spark writes): "
            f'{names}; Spark cannot restart from them ("Incomplete log file")',
            cut_log_fix(cut),
            "L16",
        )
    ]
