"""Which pipeline a checkpoint and its sink folders belong to: refuses, before a run starts,
the changes between runs that would lose or double records without an error from Spark.

A checkpoint holds what its source has read (Spark tracks the files of one path), the
operator's state in that operator's layout, and the batch ids it has planned; each sink skips
the batch ids it already holds. So, on an existing checkpoint:

- another operator leaves the old operator's state unread for ever (open sessions are lost);
- another source path or format reads every file of the new path again (records doubled);
- another pattern (its stages, quantifiers, comparisons, key or carried fields; a stage's
  ``where`` may change) reads the stored partial matches under the new stages (wrong matches, or
  a failure in the middle of a batch);
- sink folders holding batch ids the checkpoint never planned (a new checkpoint beside the
  outputs of an old one) would make the sinks skip the new batches as written (records lost).

The first run records the pipeline in ``<checkpoint>/streamwarden/pipeline.json``; every later
run compares with it. A checkpoint from before this record is adopted as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streamwarden.atomic import remove_stale_temporaries, write_atomically
from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.config.model import PipelineConfig
from streamwarden.errors import ConfigError, StateError
from streamwarden.operators import operator_of
from streamwarden.settings.context import RunContext
from streamwarden.sinks.base import open_sink, sink_kind
from streamwarden.sources.base import source_of

__all__ = ["IDENTITY_FILE", "check_ownership", "check_query_ownership", "identity"]

IDENTITY_FILE = "pipeline.json"
#: The keys of an identity besides the operator's own (``Operator.state_identity``).
_PIPELINE_KEYS = ("operator", "source")


def identity(config: PipelineConfig) -> dict[str, Any]:
    """What a checkpoint's content depends on: the operator and what its state depends on
    (e.g. a pattern's layout), and the source (``Source.identity``)."""
    return {
        "operator": config.operator,
        "source": source_of(config.source).identity(config.source),
        **operator_of(config).state_identity(config),
    }


def check_ownership(config: PipelineConfig) -> None:
    """Raises :class:`ConfigError` if ``config`` is not the pipeline that wrote its checkpoint
    or its sink folders; records the pipeline on a checkpoint that has no record yet."""
    checkpoint = config.checkpoint.path
    planned = _last_planned_batch(checkpoint)
    _check_sinks(config.checkpoint.path, config.context, planned)
    record = checkpoint / "streamwarden" / IDENTITY_FILE
    current = identity(config)
    if planned is not None and record.is_file():
        _compare(config, _recorded(record), current)
    write_atomically(record, json.dumps(current, indent=2, sort_keys=True) + "\n")
    remove_stale_temporaries(record.parent)  # of a run killed while writing; nothing reads them


def _recorded(record: Path) -> dict[str, Any]:
    """The pipeline a checkpoint's record names; a :class:`StateError` naming the file when it
    is not the JSON object a run writes (emptied or cut by hand, or by a full disk)."""
    try:
        recorded = json.loads(record.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        problem = f"cannot be read ({exc})"
    else:
        if isinstance(recorded, dict):
            return recorded
        problem = "holds no JSON object"
    raise StateError(
        f"the checkpoint's pipeline record {str(record)!r} {problem}: it says which pipeline "
        "the checkpoint belongs to. If this config's pipeline wrote the checkpoint, delete the "
        "file and run again (the run records the pipeline anew); otherwise use a new "
        "checkpoint.path"
    )


def _compare(config: PipelineConfig, recorded: dict[str, Any], current: dict[str, Any]) -> None:
    where = f"checkpoint {config.checkpoint.path}"
    fresh = "use a new checkpoint.path (and new sink folders) for the changed pipeline"
    if recorded.get("operator") != current["operator"]:
        raise ConfigError(
            f"{where} holds the state of operator {recorded.get('operator')!r}, but the config "
            f"runs {current['operator']!r}: the old state would never be read again (its open "
            f"sessions or partial matches lost); set operator back, or {fresh}"
        )
    if recorded.get("source") != current["source"]:
        source = source_of(config.source)
        old, new = recorded.get("source") or {}, current["source"]
        raise ConfigError(
            f"{where} has read source {source.describe(old)}, but the config reads "
            f"{source.describe(new)}: {source.change_effect}; set source back, or {fresh}"
        )
    state = [k for k in {*recorded, *current} - set(_PIPELINE_KEYS)]
    if any(recorded.get(k) != current.get(k) for k in state):
        raise ConfigError(f"{where} {operator_of(config).state_change}, or {fresh}")


def check_query_ownership(checkpoint: Path, context: RunContext, current: dict[str, Any]) -> None:
    """As :func:`check_ownership`, for a query a Python user built: ``current`` is what its
    state depends on (the operator and ``OperatorQuery.state_identity``). Its input is the
    user's DataFrame, whose identity Python cannot see: reading another input on the same
    checkpoint is the user's to avoid."""
    planned = _last_planned_batch(checkpoint)
    _check_sinks(checkpoint, context, planned)
    record = checkpoint / "streamwarden" / IDENTITY_FILE
    if planned is not None and record.is_file():
        recorded = _recorded(record)
        if recorded != current:
            raise ConfigError(
                f"checkpoint {checkpoint} holds the state of another query "
                f"({json.dumps(recorded, sort_keys=True)[:300]}), not of this one "
                f"({json.dumps(current, sort_keys=True)[:300]}): its state would be read under "
                "the wrong layout; run the query that wrote it, or use a new checkpoint (and "
                "new sink folders)"
            )
    write_atomically(record, json.dumps(current, indent=2, sort_keys=True) + "\n")
    remove_stale_temporaries(record.parent)


def _check_sinks(checkpoint: Path, context: RunContext, planned: int | None) -> None:
    for name, sink in context.outputs.items():
        written = open_sink(name, context).written_batches()
        if written and (planned is None or max(written) > planned):
            state = (
                "has planned no batch yet"
                if planned is None
                else f"has planned batches up to {planned} only"
            )
            raise ConfigError(
                f"sink {name} at {sink_kind(sink).where(sink)} holds batches up to "
                f"{max(written)}, but checkpoint "
                f"{checkpoint} {state}: these outputs belong to another checkpoint, "
                "and the sink would skip this one's batches of the same ids as already written; "
                "move or empty the sink folder, or run on the checkpoint that wrote it"
            )


def _last_planned_batch(checkpoint: Path) -> int | None:
    files = CheckpointFiles.existing(checkpoint)
    return None if files is None else files.last_planned()
