"""The checks ``doctor`` makes on a pipeline's existing checkpoint: what it pins (its state
partition count), and log files Spark would trip over at restart with a message that does not
say what to do (a checksum left without its file, a file cut short).

When a batch fails all the same, :func:`failure_advice` reads the checkpoint for the same
problems and says what to do; the runner adds it to the error it raises.
"""

from __future__ import annotations

from pathlib import Path

from streamwarden.checkpoints.cut_logs import cut_log_fix, cut_logs
from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import StreamwardenError
from streamwarden.sources.base import source_of

__all__ = [
    "CONCURRENT_QUERIES",
    "check_checkpoint_logs",
    "check_checkpoint_partitions",
    "check_cut_logs",
    "failure_advice",
    "pinned_partitions",
]

#: Spark's message when it cannot write a log file that (it thinks) another query wrote; a
#: checksum left without its file gives it too.
CONCURRENT_QUERIES = "Multiple streaming queries are concurrently using"


def pinned_partitions(config: PipelineConfig) -> int | None:
    """The state partition count the config's existing checkpoint pins; None before a first
    run. Raises :class:`StateError` for a damaged checkpoint."""
    files = CheckpointFiles.existing(config.checkpoint.path)
    return None if files is None else files.shuffle_partitions()


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
                "checkpoint-metadata-growth",
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
            "skewed-partitions",
        )
    ]


def check_checkpoint_logs(config: PipelineConfig) -> list[Finding]:
    """Checksum files left without their log file (``commits/N`` deleted by hand, its hidden
    ``.N.crc`` not): Spark then fails batch N with a message about concurrent queries."""
    orphans = _orphan_checksums(config, with_debris=False)
    if not orphans:
        return []
    names = ", ".join(str(p) for p in orphans)
    return [
        Finding(
            "checkpoint-orphan-checksum",
            Severity.ERROR,
            f"checksum file(s) without their log file in the checkpoint: {names}; Spark cannot "
            f'write that batch\'s file beside one and fails with "{CONCURRENT_QUERIES}", which '
            "is not the cause",
            f"delete {names} (left behind when a log file was deleted by hand; nothing reads "
            "it), then run again",
            "restart-blocked",
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
            "restart-blocked",
        )
    ]


def failure_advice(config: PipelineConfig, cause: str) -> str:
    """What to do about a batch of ``config``'s pipeline that failed with ``cause``, read from
    its checkpoint: Spark names the symptom (a log file it cannot read, a state file missing,
    "concurrent queries"), which is seldom what the user must fix."""
    from_source = source_of(config.source).advice(config.source, cause)
    if from_source is not None:
        return from_source
    cut = cut_logs(config)
    if cut:  # Spark: "Incomplete log file", or "next on empty iterator"
        return (
            f"{', '.join(str(c.path) for c in cut)} is cut short (empty, or missing the "
            f"lines Spark writes), as a power loss can leave it: {cut_log_fix(cut)}"
        )
    if "FileNotFoundException" in cause and str(config.checkpoint.path) in cause:
        return (
            "the checkpoint lacks a file it needs (damaged or partly deleted): restore it "
            "from a copy, or start over on a new checkpoint.path with new sink folders"
        )
    # after the failure, the debris of Spark's own failed write is among them
    orphans = _orphan_checksums(config, with_debris=True) if CONCURRENT_QUERIES in cause else []
    if orphans:
        # the run lock rules out a second run: Spark tripped over a checksum file, such as the
        # .N.crc of a commits/N deleted by hand (doctor finds those before a run)
        return (
            "no other query uses the checkpoint (this run holds its lock): Spark tripped "
            "over a log file's checksum left behind, as when a commit was deleted by hand. "
            f"Delete {', '.join(map(str, orphans))} and run again: it resumes from the "
            "checkpoint"
        )
    return "Fix the cause and run again: it resumes from the checkpoint"


def _orphan_checksums(config: PipelineConfig, *, with_debris: bool) -> list[Path]:
    files = CheckpointFiles.existing(config.checkpoint.path)
    return [] if files is None else files.orphan_checksums(with_debris=with_debris)
