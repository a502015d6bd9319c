"""A source topic deleted and made again under the same name: its offsets start over, and the
checkpoint's do not.

Spark's Kafka source knows a topic by its name only. When the checkpoint resumes a partition at
offset ``R`` and the new topic already holds records past ``R``, Spark reads from ``R`` on
without a word: the new topic's records before ``R`` are skipped, uncounted (its WARN in the
Spark log at most). So the source keeps each topic's id (Kafka's topic UUID, new for each
topic made) in ``<checkpoint>/streamwarden/kafka-topics-<source>.json`` and, before each start
of the query, compares: for a topic made again since, each partition's resume point ``R`` and
the new topic's oldest offset ``low`` are noted. With ``fail_on_data_loss = true`` the run stops
with one line saying what would be skipped; otherwise the first batch that starts at ``R``
counts the ``R - low`` offsets it skipped (:func:`count_skipped`) in its ``offsets_skipped``.
When the checkpoint's ``R`` is past the new topic's end, Spark starts the partition over at the
topic's end instead: the batch's end offset is below its start, and the batch's own progress
counts them (:func:`streamwarden.monitoring.summary.offsets_skipped`).

A topic made again while a run reads it is seen by the offsets going back (as just said), and
its id is then taken anew. An older checkpoint without the file gets one on its next start.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.atomic import write_atomically
from streamwarden.errors import SourceRecordsLostError, UnreachableError
from streamwarden.kafka.cluster import existing_topics, partition_offsets, topic_ids
from streamwarden.sources.base import SKIPPED_METRIC

__all__ = [
    "Recreated",
    "TopicsSeen",
    "account_recreated",
    "check_recreated",
    "count_skipped",
    "offsets_by_partition",
    "recreated_partitions",
    "with_skipped",
]


@dataclass(frozen=True)
class Recreated:
    """A partition of a topic made again: where the checkpoint resumes it, and where the new
    topic's records begin."""

    resume: int
    low: int


@dataclass
class TopicsSeen:
    """What ``<checkpoint>/streamwarden/kafka-topics-<source>.json`` keeps: each topic's id
    when the query last started, and the partitions of topics made again whose skipped offsets
    no batch has counted yet (``"topic/partition"`` keys)."""

    ids: dict[str, str] = field(default_factory=dict)
    pending: dict[str, Recreated] = field(default_factory=dict)
    #: What the newest batches that settled pending partitions counted, by batch id: asked
    #: again about a batch (the console's and the monitor's look), the same answer.
    counted: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def path(checkpoint: Path, source_index: int) -> Path:
        return checkpoint / "streamwarden" / f"kafka-topics-{source_index}.json"

    @classmethod
    def read(cls, path: Path) -> TopicsSeen:
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        pending = {k: Recreated(**v) for k, v in data.get("pending", {}).items()}
        return cls(dict(data.get("ids", {})), pending, dict(data.get("counted", {})))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        pending = {k: {"resume": v.resume, "low": v.low} for k, v in self.pending.items()}
        data = {"ids": self.ids, "pending": pending, "counted": self.counted}
        write_atomically(path, json.dumps(data, sort_keys=True))


_LOG = logging.getLogger(__name__)
#: How many batches' counts :attr:`TopicsSeen.counted` keeps.
_COUNTED_KEPT = 16


def offsets_by_partition(offsets: Any) -> dict[str, int]:
    """``{"topic/partition": offset}`` from Spark's Kafka offsets JSON (``{"t": {"0": 42}}``,
    as text or parsed); {} for none."""
    parsed = json.loads(offsets) if isinstance(offsets, str) else offsets
    if not isinstance(parsed, dict):
        return {}  # none yet (Spark's "null" before a partition's first batch)
    return {
        f"{topic}/{partition}": int(offset)
        for topic, partitions in parsed.items()
        for partition, offset in partitions.items()
    }


def recreated_partitions(
    resume: Mapping[str, int],
    seen_ids: Mapping[str, str],
    ids_now: Mapping[str, str],
    watermarks: Mapping[str, tuple[int, int]],
) -> dict[str, Recreated]:
    """The partitions (``"topic/partition"``) of the checkpoint's ``resume`` offsets whose
    topic's id changed since it was seen, and whose resume point is past the new topic's oldest
    offset (``watermarks``: low and high, by partition): those whose records before it would be
    skipped."""
    out = {}
    for where, offset in sorted(resume.items()):
        topic = where.rsplit("/", 1)[0]
        if topic not in seen_ids or topic not in ids_now or seen_ids[topic] == ids_now[topic]:
            continue
        low = watermarks.get(where, (0, 0))[0]
        if offset > low:
            out[where] = Recreated(resume=offset, low=low)
    return out


def count_skipped(
    pending: Mapping[str, Recreated], start: Mapping[str, int], end: Mapping[str, int]
) -> tuple[int, set[str]]:
    """The offsets a batch (its ``start`` and ``end`` offsets by partition) skipped in topics
    made again, and the pending partitions it settles: one that starts at its resume point
    skipped ``resume - low`` offsets; one whose end is below its start was started over by
    Spark, and the batch's own progress counts it."""
    skipped, settled = 0, set()
    for where, recreated in pending.items():
        if where not in start or where not in end:
            continue
        if end[where] < start[where]:
            settled.add(where)
        elif start[where] == recreated.resume:
            skipped += recreated.resume - recreated.low
            settled.add(where)
    return skipped, settled


def with_skipped(progress: dict[str, Any], source_index: int, skipped: int) -> dict[str, Any]:
    """``progress`` with ``skipped`` added to its source's :data:`SKIPPED_METRIC`."""
    sources = progress.get("sources") or []
    if skipped <= 0 or source_index >= len(sources):
        return progress
    source = sources[source_index]
    metrics = dict(source.get("metrics") or {})
    metrics[SKIPPED_METRIC] = str(int(metrics.get(SKIPPED_METRIC, 0)) + skipped)
    source["metrics"] = metrics
    return progress


def check_recreated(
    client: Mapping[str, str],
    timeout_s: float,
    path: Path,
    resume: Mapping[str, int],
    topics: list[str],
    fail_on_data_loss: bool,
) -> None:
    """Before a start of the query: compares the ids of the topics the checkpoint resumes (and
    ``topics``) with those seen before (the file at ``path``); for a topic made again, raises
    :class:`SourceRecordsLostError` with ``fail_on_data_loss``, else notes what its first batch
    skips. Then keeps the ids seen now."""
    seen = TopicsSeen.read(path)
    names = sorted({where.rsplit("/", 1)[0] for where in resume} | set(topics))
    try:
        now = topic_ids(client, names, timeout_s)
        remade = sorted(t for t in now if t in seen.ids and seen.ids[t] != now[t])
        found: dict[str, Recreated] = {}
        if remade and resume:
            counts = existing_topics(client, timeout_s)
            wanted = {t: counts[t] for t in remade if t in counts}
            offsets = partition_offsets(client, wanted, timeout_s)
            watermarks = {f"{t}/{p}": v for (t, p), v in offsets.items()}
            found = recreated_partitions(resume, seen.ids, now, watermarks)
    except UnreachableError as exc:
        # the broker is away (a restart during an outage): the query's own start then waits
        # or fails as Spark does, and the next start compares the ids
        _LOG.warning("the source topics' ids were not compared at this start: %s", exc)
        return
    if found and fail_on_data_loss:
        lost = ", ".join(
            f"{where} offsets {r.low}-{r.resume - 1}" for where, r in sorted(found.items())
        )
        raise SourceRecordsLostError(
            f"Kafka topic {', '.join(repr(t) for t in remade)} was deleted and made again since "
            f"the checkpoint's last batch: its offsets started over, and the checkpoint would "
            f"resume past records of the new topic, skipping {lost} without reading them. To "
            "go on without them, set source.fail_on_data_loss = false and run again (they are "
            "counted as offsets_skipped); to read the new topic from its start, use a new "
            "checkpoint.path"
        )
    seen.pending.update(found)
    seen.ids.update(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    seen.write(path)


def account_recreated(
    client: Mapping[str, str],
    timeout_s: float,
    path: Path,
    source_index: int,
    progress: dict[str, Any],
) -> dict[str, Any]:
    """A batch's progress with the offsets it skipped in topics made again added to its
    source's :data:`SKIPPED_METRIC` (see :func:`count_skipped`). A batch whose offsets went
    back (a topic made again while the run reads it) has the topics' ids taken anew. Costs a
    look at a small file when nothing is pending."""
    sources = progress.get("sources") or []
    if source_index >= len(sources):
        return progress
    source = sources[source_index]
    start = offsets_by_partition(source.get("startOffset"))
    end = offsets_by_partition(source.get("endOffset"))
    went_back = any(end[w] < start[w] for w in end if w in start)
    if not went_back and not path.is_file():
        return progress
    seen = TopicsSeen.read(path)
    batch = str(progress.get("batchId"))
    if batch in seen.counted:  # asked again about a batch: the same answer
        return with_skipped(progress, source_index, seen.counted[batch])
    skipped, settled = count_skipped(seen.pending, start, end)
    if settled:
        newest = sorted(seen.counted.items(), key=lambda kv: int(kv[0]))[-(_COUNTED_KEPT - 1) :]
        seen.counted = {**dict(newest), batch: skipped}
    if went_back:
        try:
            names = sorted({where.rsplit("/", 1)[0] for where in end})
            seen.ids.update(topic_ids(client, names, timeout_s))
        except UnreachableError:
            pass  # taken at the next start instead (which then counts that batch's skip again)
    if settled or went_back:
        seen.pending = {k: v for k, v in seen.pending.items() if k not in settled}
        seen.write(path)
    return with_skipped(progress, source_index, skipped)
