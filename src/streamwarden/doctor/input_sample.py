"""``doctor`` reads a sample of the input against the schema: what each record would get.

A field-name typo in ``[schema]`` sends every record to the dead letters; event times in seconds
read as milliseconds land in January 1970. Both pass every check of the settings alone, so
``doctor`` reads up to :data:`SAMPLE` records of the newest landing files with the very reader a
pipeline validates with (the engine's ``RecordReader``, in a small JVM without Spark), and
reports the share that would be dead letters with their reasons, and event times that are
implausible for the declared unit (with the unit that would make them plausible).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.sources.files import FilesSourceSettings, landing_folder, landing_pattern
from streamwarden.sources.landing_guard import expand_pattern
from streamwarden.validation.validate import reader_spec

__all__ = ["SAMPLE", "check_input_sample", "landing_sample"]

#: How many records doctor reads.
SAMPLE = 200
_UNIT_MS = {"s": 1000, "ms": 1, "us": 0.001}


def check_input_sample(config: PipelineConfig) -> list[Finding]:
    """Findings from a sample of the input; none when there is no input to read yet (or the
    source is not a landing folder of JSON lines)."""
    records = landing_sample(config.source)
    if not records:
        return []
    outcomes = _outcomes(config, records)
    where = f"the newest landing files of {str(landing_folder(config.source))!r}"
    return [*_rejects(outcomes, len(records), where), *_times(config, outcomes, where)]


def landing_sample(source: object, limit: int = SAMPLE) -> list[str]:
    """Up to ``limit`` records of the newest input files of a JSON-lines landing folder."""
    if not isinstance(source, FilesSourceSettings) or source.format != "jsonl":
        return []
    folder = source.folder
    if not folder.is_dir():
        return []
    files = {f for glob in expand_pattern(landing_pattern(source)) for f in folder.glob(glob)}
    newest = sorted(
        (f for f in files if f.is_file() and not f.name.startswith((".", "_"))),
        key=lambda f: f.stat().st_mtime,
        reverse=True,
    )
    records: list[str] = []
    for path in newest:
        records += _lines(path, limit - len(records))
        if len(records) >= limit:
            break
    return records


def _lines(path: Path, limit: int) -> list[str]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    out: list[str] = []
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    out.append(line.rstrip("\n"))
                if len(out) >= limit:
                    break
    except OSError:
        return out
    return out


def _outcomes(config: PipelineConfig, records: list[str]) -> list[dict[str, Any]]:
    from streamwarden.spark.engine_gateway import engine_gateway

    source = config.source
    spec = json.dumps(
        reader_spec(
            config.schema,
            time_from_source=getattr(source, "event_time", "field") != "field",
            key_from_source=getattr(source, "key", "field") != "field",
        )
    )
    reader = engine_gateway().jvm.io.streamwarden.engine.json.RecordReader
    return [json.loads(reader.outcomeJson(record, spec)) for record in records]


def _rejects(outcomes: list[dict[str, Any]], sampled: int, where: str) -> list[Finding]:
    reasons = Counter(o["reason"] for o in outcomes if o["reason"] is not None)
    rejected = sum(reasons.values())
    if not rejected:
        return []
    top = reasons.most_common(1)[0][0]
    detail = next(o["detail"] for o in outcomes if o["reason"] == top)
    listed = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
    return [
        Finding(
            "input-rejected",
            Severity.ERROR if rejected == sampled else Severity.WARNING,
            f"of {sampled} record(s) sampled from {where}, {rejected} would be dead letters "
            f"({listed}); e.g. {top}: {detail}",
            "check [schema] (field names, types, key, time and time_unit) against these records",
            "bad-input",
        )
    ]


def _times(config: PipelineConfig, outcomes: list[dict[str, Any]], where: str) -> list[Finding]:
    times = [o["ts_ms"] for o in outcomes if o["reason"] is None and o["ts_ms"] is not None]
    earliest = config.validation.earliest_event_time
    # with earliest_event_time off, the user says early times are real: only the far future
    # (seconds read as microseconds, say) is implausible
    low = datetime(1, 1, 1, tzinfo=UTC) if earliest is None else earliest
    high = datetime.now(UTC) + timedelta(days=366)
    plausible = [t for t in times if _plausible(t, low, high)]
    if not times or len(plausible) == len(times):
        return []
    odd = next(t for t in times if not _plausible(t, low, high))
    unit = config.schema.time_unit
    better = [
        u
        for u, per_ms in _UNIT_MS.items()
        if u != unit and all(_plausible(int(t / _UNIT_MS[unit] * per_ms), low, high) for t in times)
    ]
    hint = f"; read in {better[0]!r} they would be plausible" if better else ""
    return [
        Finding(
            "implausible-event-times",
            Severity.ERROR if not plausible else Severity.WARNING,
            f"{len(times) - len(plausible)} of {len(times)} event times read from {where} are "
            f"outside {low:%Y-%m-%d} .. {high:%Y-%m-%d} (validation.earliest_event_time .. a "
            f"year from now), e.g. {_shown(odd)} (schema.time "
            f"{config.schema.time!r} in {unit!r}){hint}",
            f"set schema.time_unit to {better[0]!r}"
            if better
            else "check schema.time and schema.time_unit against these records",
            "bad-input",
        )
    ]


def _plausible(ms: int, low: datetime, high: datetime) -> bool:
    return low.timestamp() * 1000 <= ms <= high.timestamp() * 1000


def _shown(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return f"{ms} ms"
