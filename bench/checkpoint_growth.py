"""Checkpoint bytes over a 300-batch sessions run (issue 19: the checkpoint levels off once
Spark's retention, ``spark.sql.streaming.minBatchesToRetain`` = 100 by default, is reached).

Usage: ``.venv/bin/python bench/checkpoint_growth.py [--batches 300] [--every 25]``

One small landing file per batch (``max_files_per_trigger = 1``), rotating users so that state
stays about flat; after every ``--every`` batches it prints the bytes on disk of the
checkpoint's parts: state (RocksDB files of every retained version), the offsets and commits
logs, and the sources' own logs (``sources/0``, the landing files ever read; ``sources/1``,
the idle ticks). A Markdown table, ready for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.loading import parse_pipeline_config
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
    for b in range(args.batches):
        lines = [
            f'{{"user_id":"u{(b * 7 + i) % 200}","ts":{t0 + b * 60_000 + i * 100},'
            f'"page_number":1,"url":"/p"}}'
            for i in range(40)
        ]
        (landing / f"batch-{b:05d}.jsonl").write_text("\n".join(lines) + "\n")
    config = parse_pipeline_config(
        {
            "source": {"path": str(landing), "max_files_per_trigger": 1},
            "sessions": {"gap": "5m", "allowed_lateness": "1m"},
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
    print("| batches | state | offsets + commits | sources/0 | sources/1 | total |")
    print("|---:|---:|---:|---:|---:|---:|")

    def on_progress(progress: dict[str, Any], _stats: Any) -> None:
        n = int(progress["batchId"]) + 1
        if n % args.every and n != 1:
            return
        parts = [
            _bytes(ck / "state"),
            _bytes(ck / "offsets") + _bytes(ck / "commits"),
            _bytes(ck / "sources" / "0"),
            _bytes(ck / "sources" / "1"),
        ]
        cells = " | ".join(f"{p / 1024:,.0f} KiB" for p in [*parts, _bytes(ck)])
        print(f"| {n} | {cells} |", flush=True)

    Pipeline(config, spark).run(once=True, on_progress=on_progress)


if __name__ == "__main__":
    main()
