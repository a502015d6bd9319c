"""The history merge: the step between the session engine and the sinks when a pipeline keeps
its closed sessions in a history store (``[history]``, lesson L8).

For each batch, before any sink writes (``BatchWriter.prepare``):

1. the engine's ``history`` rows (late events beyond ``allowed_lateness`` that found no session
   in state, within ``history_lateness``) are grouped by user, their users' stored sessions
   around them are looked up, together with the sessions the engine emitted in this very batch
   (one may have left state in it), and the Java engine merges them with the state's own rules
   (``HistoryMerge.mergeJson``): revised sessions (revision + 1, absorbed ids named), new
   sessions, dead letters at a cap;
2. in one store transaction, every session emitted in the batch (the engine's and the merge's)
   is kept, absorbed ones are deleted, and the batch is recorded with the merge's output rows;
3. the sinks get the engine's rows without the history rows, with the merge's rows instead; a
   session the merge revised is written once, in its merged revision (at most one update per
   session per batch).

A batch replayed after a crash (after the store's commit, before Spark's) finds its record and
gets the same rows back without merging again, so the store changes nothing and the sinks get
what they got, or would have got, the first time. Nothing of this is in streaming state.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.errors import StateError
from streamwarden.history.base import HISTORY_KINDS, SESSION_FIELDS, HistoryStore, Row, Wanted
from streamwarden.spark.jvm import call_engine

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView
    from streamwarden.operators.sessions.params import SessionParams

__all__ = ["HistoryMerge", "open_history"]

_EVENT_FIELDS = ("user_id", "event_ts_ms", "raw", "event_page", "event_url", "event_size")
_SESSION_ROW_FIELDS = (*SESSION_FIELDS, "merged_session_ids")


def open_history(config: PipelineView) -> HistoryStore:
    """The history store ``[history]`` configures (the config model has checked it is there)."""
    history = config.history
    assert history is not None
    collect_urls = bool(getattr(config.section, "collect_urls", False))
    return HISTORY_KINDS[history.kind].open(history, config.context, collect_urls)


class HistoryMerge:
    """``BatchWriter.prepare`` for a sessions pipeline with a history store (see the module's
    description). The store is opened at the first batch and kept for the run."""

    def __init__(self, config: PipelineView, params: SessionParams) -> None:
        self._config = config
        self._plan_json = params.to_plan_json()
        self._gap_ms = int(params.gap.total_seconds() * 1000)
        self._store: HistoryStore | None = None
        self._run_id: str | None = None

    def __call__(self, combined: DataFrame, batch_id: int) -> DataFrame:
        store = self._open()
        run_id = self._checkpoint_id()
        merged = store.applied(run_id, batch_id)
        if merged is None:
            merged = self._merge_and_store(combined, store, run_id, batch_id)
        return _replace(combined, merged)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _open(self) -> HistoryStore:
        if self._store is None:
            self._store = open_history(self._config)
        return self._store

    def _checkpoint_id(self) -> str:
        """The query's id in its checkpoint: batch ids restart with a new checkpoint, so the
        store's record of applied batches is per checkpoint."""
        if self._run_id is None:
            metadata = Path(self._config.context.checkpoint) / "metadata"
            try:
                self._run_id = str(json.loads(metadata.read_text(encoding="utf-8"))["id"])
            except (OSError, ValueError, KeyError):
                raise StateError(
                    f"the checkpoint's metadata {str(metadata)!r} has no query id; is "
                    "[checkpoint] path the folder this query writes?"
                ) from None
        return self._run_id

    def _merge_and_store(
        self, combined: DataFrame, store: HistoryStore, run_id: str, batch_id: int
    ) -> list[Row]:
        late = _collect(combined, "history", _EVENT_FIELDS)
        emitted = _collect(combined, "session", _SESSION_ROW_FIELDS)
        merged = self._merge(combined, store, late, emitted) if late else []
        replaced = _replaced_ids(merged)
        kept = [s for s in emitted if s["session_id"] not in replaced]
        sessions = [*kept, *(r for r in merged if r["kind"] == "session")]
        deletions = {i for s in sessions for i in s.get("merged_session_ids") or ()}
        if sessions or merged:
            store.apply(
                run_id,
                batch_id,
                [s for s in sessions if s["session_id"] not in deletions],
                sorted(deletions),
                merged,
            )
        return merged

    def _merge(
        self,
        combined: DataFrame,
        store: HistoryStore,
        late: list[dict[str, Any]],
        emitted: list[dict[str, Any]],
    ) -> list[Row]:
        events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in late:
            events[e["user_id"]].append(e)
        wanted = [
            Wanted(
                user,
                min(e["event_ts_ms"] for e in evs) - self._gap_ms + 1,
                max(e["event_ts_ms"] for e in evs) + self._gap_ms,
            )
            for user, evs in events.items()
        ]
        sessions: dict[str, dict[str, Row]] = defaultdict(dict)
        for s in [*store.lookup(wanted), *(s for s in emitted if s["user_id"] in events)]:
            sessions[s["user_id"]][s["session_id"]] = s  # this batch's emission is the newer
        absorbed = {i for s in emitted for i in s.get("merged_session_ids") or ()}
        request = {
            "watermark_ms": max(e["event_ts_ms"] for e in late) + self._gap_ms,
            "users": [
                {
                    "user_id": user,
                    "sessions": [
                        _jsonable(s) for i, s in sessions[user].items() if i not in absorbed
                    ],
                    "events": [_event(e) for e in evs],
                }
                for user, evs in sorted(events.items())
            ],
        }
        answer = call_engine(
            combined.sparkSession,
            "history merge",
            lambda jvm: jvm.io.streamwarden.engine.sessions.HistoryMerge.mergeJson(
                self._plan_json, json.dumps(request)
            ),
        )
        rows: list[Row] = json.loads(answer)["rows"]
        return rows


def _collect(combined: DataFrame, kind: str, fields: Sequence[str]) -> list[dict[str, Any]]:
    rows = combined.where(F.col("kind") == kind).select(*fields).collect()
    return [r.asDict(recursive=True) for r in rows]


def _event(e: dict[str, Any]) -> dict[str, Any]:
    return {
        "ts_ms": e["event_ts_ms"],
        "page": e["event_page"],
        "url": e["event_url"],
        "size": e["event_size"],
        "raw": e["raw"],
    }


def _jsonable(s: Row) -> dict[str, Any]:
    return {n: (list(s[n]) if isinstance(s[n], tuple) else s[n]) for n in SESSION_FIELDS}


def _replaced_ids(merged: Iterable[Row]) -> set[str]:
    """Sessions of the engine's output that the merge's rows supersede: the ones it revised,
    and the ones it absorbed."""
    ids: set[str] = set()
    for r in merged:
        if r["kind"] == "session":
            ids.add(r["session_id"])
            ids.update(r.get("merged_session_ids") or ())
    return ids


def _replace(combined: DataFrame, merged: list[Row]) -> DataFrame:
    """The engine's output without its history rows and the sessions the merge superseded,
    with the merge's rows instead."""
    kept = combined.where(F.col("kind") != "history")
    replaced = _replaced_ids(merged)
    if replaced:
        kept = kept.where(F.col("session_id").isNull() | ~F.col("session_id").isin(*replaced))
    if not merged:
        return kept
    schema = combined.schema
    rows = [tuple(r.get(f.name) for f in schema.fields) for r in merged]
    return kept.unionByName(combined.sparkSession.createDataFrame(rows, schema))
