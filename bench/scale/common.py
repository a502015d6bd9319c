"""What the scale benchmarks (bench/scale/, issue 21) share: the data sets, one Spark engine run
per subprocess, the parts of StreamingQueryProgress they read, medians and result files."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from scale.traffic import SteadyTraffic, write_files  # noqa: E402

RESULTS = BENCH / "results"
DATA = BENCH / "data" / "scale"
PYTHON = ROOT / ".venv" / "bin" / "python"
FLINK_PYTHON = ROOT / ".venv-flink" / "bin" / "python"

#: The parts of a micro-batch's ``durationMs`` the reports break a batch into.
DURATION_PARTS = (
    "triggerExecution",
    "addBatch",
    "queryPlanning",
    "getBatch",
    "latestOffset",
    "walCommit",
    "commitOffsets",
)
#: The state operator's own timings and sizes.
STATE_PARTS = (
    "allUpdatesTimeMs",
    "allRemovalsTimeMs",
    "commitTimeMs",
    "numRowsTotal",
    "numRowsUpdated",
    "numRowsRemoved",
    "memoryUsedBytes",
)

#: The state operator's custom metrics each batch's row keeps (the analyses read these; the
#: other 40, e.g. per-partition snapshot versions and state-variable counts, made a 2,667-batch
#: run's rows 6 MB).
CUSTOM_KEPT = frozenset(
    {
        "numExpiredTimers",
        "numRegisteredTimers",
        "numDeletedTimers",
        "timerProcessingTimeMs",
        "rocksdbGetCount",
        "rocksdbPutCount",
        "rocksdbGetLatency",
        "rocksdbPutLatency",
        "rocksdbReadBlockCacheHitCount",
        "rocksdbReadBlockCacheMissCount",
        "rocksdbTotalBytesWritten",
        "rocksdbSstFileSize",
        "rocksdbCommitCheckpointLatency",
        "rocksdbCommitFlushLatency",
        "rocksdbTotalCompactionLatencyMs",
        "rocksdbWriterStallLatencyMs",
        "rocksdbPinnedBlocksMemoryUsage",
    }
)


def dataset(traffic: SteadyTraffic) -> Path:
    """The traffic's files, generated once under bench/data/scale/."""
    name = (
        f"n{traffic.slots}-b{traffic.batch_events}-s{traffic.steady_batches}"
        f"-l{traffic.lifetime}-w{traffic.warmup_revisits}"
    )
    return write_files(traffic, DATA / name)


def batch_row(progress: dict[str, Any]) -> dict[str, Any]:
    """One micro-batch's figures from its StreamingQueryProgress (as a dict)."""
    row: dict[str, Any] = {
        "batchId": progress["batchId"],
        "numInputRows": progress["numInputRows"],
        **{f"ms_{k}": progress["durationMs"].get(k, 0) for k in DURATION_PARTS},
    }
    ops = progress.get("stateOperators") or []
    for k in STATE_PARTS:
        row[f"state_{k}"] = sum(int(op.get(k, 0)) for op in ops)
    custom: dict[str, int] = {}
    for op in ops:
        for k, v in (op.get("customMetrics") or {}).items():
            if k in CUSTOM_KEPT:
                custom[k] = custom.get(k, 0) + int(v)
    row["custom"] = custom
    return row


def last_quarter_median(rows: Sequence[dict[str, Any]], key: str) -> float:
    """Median of ``key`` over the last quarter of ``rows`` (at least one row)."""
    tail = rows[len(rows) - max(1, len(rows) // 4) :]
    return float(statistics.median(r[key] for r in tail))


def tail_mean(rows: Sequence[dict[str, Any]], key: str, count: int) -> float:
    """Mean of ``key`` over the last ``count`` of ``rows`` (at least one row)."""
    return float(statistics.fmean(r[key] for r in rows[len(rows) - max(1, count) :]))


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares ``y = a + b x`` over ``points``; None with fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - b * mx, b


@contextlib.contextmanager
def engine_process(
    command: Sequence[str], log: Path, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """Starts ``command`` in a process group of its own, stderr to ``log`` and stdout to
    ``log`` with the suffix ``.out``; on leaving, kills whatever of the group is left (a JVM
    child can outlive its Python). ``env`` adds to (or overrides) this process's environment."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as err, log.with_suffix(".out").open("w") as out:
        child = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=err,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            start_new_session=True,
        )
        try:
            yield child
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def run_json(
    command: Sequence[str],
    log: Path,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Runs ``command`` (one engine run in a process of its own), its stderr to ``log``; returns
    the JSON object on the last line of its stdout.

    Waits for the process, not for the end of its output: a PySpark child's JVM inherits the
    stdout, and one was seen to outlive its Python (exit 0, JSON printed) in a shutdown that
    never finished, after 342 batches with 5M keys of state. So stdout goes to a file, the
    child runs in a process group of its own, and whatever of the group is left when the child
    has exited is killed. ``env`` adds to (or overrides) this process's environment."""
    with engine_process(command, log, env) as child:
        code = child.wait(timeout=timeout)
    stdout = log.with_suffix(".out")
    if code != 0:
        raise RuntimeError(f"{command[1:3]} failed (exit {code}); see {log}")
    result: dict[str, Any] = json.loads(stdout.read_text().strip().splitlines()[-1])
    return result


#: A results document longer than this (characters of JSON, about 2,000 lines) is written
#: gzip-compressed, as NAME.json.gz: the per-batch figures of a long run are megabytes of JSON
#: (the summary of such a run is its NAME.md); a shorter one is written as plain NAME.json.
COMPRESS_ABOVE = 50_000


def results_file(name: str) -> Path | None:
    """bench/results/NAME.json, or NAME.json.gz where the plain file is absent; None if neither."""
    for path in (RESULTS / f"{name}.json", RESULTS / f"{name}.json.gz"):
        if path.exists():
            return path
    return None


def load(name: str) -> dict[str, Any]:
    """The results document NAME, from NAME.json or (where that is absent) NAME.json.gz."""
    path = results_file(name)
    if path is None:
        raise FileNotFoundError(f"no {RESULTS / name}.json or .json.gz")
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            document: dict[str, Any] = json.load(f)
        return document
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def save(name: str, document: dict[str, Any]) -> Path:
    """Writes bench/results/NAME.json, or NAME.json.gz (gzip -9, no timestamp: the same document
    gives the same bytes) if longer than ``COMPRESS_ABOVE``, and removes the other one, so that
    ``load`` never reads a stale file."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, default=str)
    plain, packed = RESULTS / f"{name}.json", RESULTS / f"{name}.json.gz"
    if len(text) > COMPRESS_ABOVE:
        packed.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
        plain.unlink(missing_ok=True)
        return packed
    plain.write_text(text, encoding="utf-8")
    packed.unlink(missing_ok=True)
    return plain


def proc_memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of process ``pid`` in bytes, from /proc."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.exists() else 0


#: What asking a port that is not (or not yet) Flink's REST API can raise: refused or timed out
#: connections, and a JVM's other ports (py4j's, say) that answer with something not HTTP/JSON.
NOT_REST = (OSError, http.client.HTTPException, ValueError)


class FlinkRest:
    """Flink's REST API on 127.0.0.1:``port``, as the Flink benchmarks read it: the one running
    job, its vertices' metrics and its checkpoint statistics."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.job: str | None = None

    def get(self, path: str) -> Any:
        """The JSON answer to ``GET path``, None while nothing answers it as Flink's REST API."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return json.loads(r.read())
        except NOT_REST:
            return None

    def job_id(self) -> str | None:
        """The running job's id, remembered once seen (a benchmark's JVM runs one job)."""
        if self.job is None:
            jobs = (self.get("/jobs") or {}).get("jobs", [])
            running = [j["id"] for j in jobs if j["status"] == "RUNNING"]
            self.job = running[0] if running else None
        return self.job

    def vertices(self) -> list[dict[str, Any]]:
        """The running job's vertices in topological order (the source first), with their
        aggregated metrics; empty while there is no running job."""
        job = self.job_id()
        detail = self.get(f"/jobs/{job}") if job else None
        return detail["vertices"] if detail else []

    def checkpoints(self) -> dict[str, Any]:
        """The running job's checkpoint statistics (``counts``, ``latest``); empty while there is
        no running job."""
        job = self.job_id()
        return (self.get(f"/jobs/{job}/checkpoints") if job else None) or {}


def flink_jvm_env(heap: str | None, gc_log: Path) -> dict[str, str]:
    """The environment that gives PyFlink's local JVM (its gateway, which runs the mini-cluster
    and so the job) a maximum heap of ``heap`` (the JVM's default when None) and a GC log at
    ``gc_log``: with heap state, the heap after a collection is the state's footprint. A heap
    too small for the state fails no job: at 5M keys ``MATCH_RECOGNIZE`` in the default heap
    had not finished its warm-up after 16 minutes (10 with 16g); its GC log is where to look.
    The log is overwritten by the next run of the same point (``filecount=0``: by default the
    JVM keeps the old one as ``.0``, ``.1``, ...)."""
    args = [f"-Xlog:gc:file={gc_log}::filecount=0"]
    if heap:
        args.insert(0, f"-Xmx{heap}")
    return {"JVM_ARGS": " ".join(args)}


_GC_PAUSE = re.compile(
    r"^\[(?P<uptime>[\d.]+)s\].*GC\(\d+\) Pause (?P<kind>\w+(?: \([\w ]+\))?).* "
    r"(?P<before>\d+)M->(?P<after>\d+)M\((?P<size>\d+)M\) (?P<ms>[\d.]+)ms"
)


def gc_summary(gc_log: Path) -> dict[str, Any] | None:
    """Pauses, their total time, full collections and the heap in use (MiB) from a JDK unified
    GC log (``-Xlog:gc``) of G1; None when there is no log.

    ``live_mib`` is the heap left by the log's last full collection or last series of mixed
    ones (the old generation's garbage collected too): the live data, heap state included, at
    the latest point the collector measured it, an upper bound (G1 leaves mostly-live regions
    alone), ``live_at_seconds`` the JVM's uptime then: a job whose heap never filled enough
    for an old-generation collection has only start-up's. A young collection leaves the old
    generation's garbage, so the heap after it (``max_after_gc_mib``) overstates what is live."""
    if not gc_log.exists():
        return None
    pauses = [m for m in map(_GC_PAUSE.search, gc_log.read_text().splitlines()) if m]
    live = [
        m
        for m, following in zip(pauses, [*pauses[1:], None], strict=True)
        if m["kind"].startswith("Full")
        or (m["kind"] == "Young (Mixed)" and (following is None or following["kind"] != m["kind"]))
    ]
    return {
        "pauses": len(pauses),
        "pause_seconds": round(sum(float(m["ms"]) for m in pauses) / 1000, 3),
        "full_collections": sum(m["kind"].startswith("Full") for m in pauses),
        "live_mib": int(live[-1]["after"]) if live else None,
        "live_at_seconds": float(live[-1]["uptime"]) if live else None,
        "max_after_gc_mib": max((int(m["after"]) for m in pauses), default=None),
        "heap_size_mib": max((int(m["size"]) for m in pauses), default=None),
    }
