"""Checkpoint bytes over a 300-batch sessions run (issue 19: the checkpoint levels off once
Spark's retention, ``spark.sql.streaming.minBatchesToRetain`` = 100 by default, is reached).

Usage: ``.venv/bin/python bench/checkpoint_growth.py [--batches 300] [--every 25]``

One small landing file per batch (``max_files_per_trigger = 1``), rotating users so that state
stays about flat, the files an hour apart by modification time (300 files span 12.5 days, so the
files source's log reaches its ``maxFileAge`` bound of 7 days after 168 files); after every
``--every`` batches it prints the bytes on disk of the checkpoint's parts: state, live (what the
latest version needs) and retained history (older versions Spark keeps, up to
``minBatchesToRetain``), the offsets and commits logs, and the sources' own logs (``sources/0``,
the landing files read, with the entries of its latest compact file; ``sources/1``, the idle
ticks). A Markdown table, ready for BENCHMARKS.md. Bytes, not times: valid on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.config import parse_config
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.pipeline import Pipeline
from streamwarden.sources.file_log import latest_compact
from streamwarden.spark.session import build_spark_session


def _bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--every", type=int, default=25)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="checkpoint-growth-"))
    landing = root / "landing"
    landing.mkdir()
    t0 = 1_767_225_600_000
    first_mtime = time.time() - args.batches * 3600
    for b in range(args.batches):
        lines = [
            f'{{"user_id":"u{(b * 7 + i) % 200}","ts":{t0 + b * 60_000 + i * 100},'
            f'"page_number":1,"url":"/p"}}'
            for i in range(40)
        ]
        path = landing / f"batch-{b:05d}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (first_mtime + b * 3600, first_mtime + b * 3600))
    config = parse_config(
        {
            "schema": PAGEVIEW_SCHEMA,
            "source": {"path": str(landing), "max_files_per_trigger": 1},
            "sessions": {
                "gap": "5m",
                "allowed_lateness": "1m",
                "aggregates": PAGEVIEW_AGGREGATES,
            },
            "sinks": {
                "sessions": {"path": str(root / "sessions")},
                "dead_letters": {"path": str(root / "dead")},
            },
            "checkpoint": {"path": str(root / "ck")},
            "spark": {"shuffle_partitions": 2},
            "monitoring": {"prometheus_port": "off"},
        },
        origin="bench",
    )
    spark = build_spark_session(
        app_name="checkpoint-growth", master="local[2]", shuffle_partitions=2
    )
    ck = config.checkpoint.path
    print(
        "| batches | state live | state history | offsets + commits | sources/0 "
        "(entries) | sources/1 | total |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")

    def on_progress(progress: dict[str, Any], _stats: Any) -> None:
        n = int(progress["batchId"]) + 1
        if n % args.every and n != 1:
            return
        split = CheckpointFiles(ck).state_split()
        compact = latest_compact(ck / "sources" / "0")
        entries = 0 if compact is None else len(compact.read_text().splitlines()) - 1
        kib = [
            split.live_bytes,
            split.history_bytes,
            _bytes(ck / "offsets") + _bytes(ck / "commits"),
        ]
        cells = " | ".join(f"{p / 1024:,.0f} KiB" for p in kib)
        sources = f"{_bytes(ck / 'sources' / '0') / 1024:,.0f} KiB ({entries})"
        tail = f"{_bytes(ck / 'sources' / '1') / 1024:,.0f} KiB | {_bytes(ck) / 1024:,.0f} KiB"
        print(f"| {n} | {cells} | {sources} | {tail} |", flush=True)

    Pipeline(config, spark).run(once=True, on_progress=on_progress)


if __name__ == "__main__":
    main()
