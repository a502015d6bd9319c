"""``streamwarden demo --example NAME``: an example's generated data through the example's
own config (``examples/<config>.toml``) on local Spark, its folders moved into the demo's,
drained so that every session, window and partial match closes and every row is freed; then
what it wrote, against what the generator knows by construction
(:mod:`streamwarden.local.examples.outcomes`).

(The pageviews example is the default demo, :mod:`streamwarden.local.demo_sessions`.)
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.local.demo_folder import replace_demo_folder
from streamwarden.local.examples.catalog import EXAMPLES, examples_folder, generate_example
from streamwarden.local.examples.outcomes import show_outcome
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.sinks.parquet import parquet_folder
from streamwarden.spark.log_file import spark_logging_to

if TYPE_CHECKING:
    from streamwarden.operators.base import BatchStats

__all__ = ["example_demo_command", "example_demo_config"]


def example_demo_config(name: str, out: Path) -> PipelineConfig:
    """Example ``name``'s config with its landing folder (``out/landing``; with several
    sources, ``out/landing/<source>``), sinks and checkpoint under ``out``, and 2 state
    partitions (the demo's 2 cores)."""
    path = examples_folder() / EXAMPLES[name].config
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    if "sources" in data:
        data["sources"] = {
            source: {**settings, "path": str(out / "landing" / source)}
            for source, settings in data["sources"].items()
        }
    else:
        data["source"] = {**data["source"], "path": str(out / "landing")}
    data["sinks"] = {
        sink: {**settings, "path": str(out / sink)} for sink, settings in data["sinks"].items()
    }
    data["checkpoint"] = {**data["checkpoint"], "path": str(out / "checkpoint")}
    data["spark"] = {**data.get("spark", {}), "shuffle_partitions": 2}
    return parse_config(data, origin=f"{path} (its folders in {out})", base=path.parent)


def example_demo_command(
    name: str, out: Path, *, size: int | None, seed: int, batches: int = 30
) -> int:
    """Runs the demo of example ``name``; exit 1 if the accounting does not balance or the
    outputs differ from what the data holds by construction."""
    out = out.resolve()
    config = example_demo_config(name, out)
    replace_demo_folder(out)  # after the arguments are checked
    landing = out / "landing"
    summary = generate_example(name, landing, seed=seed, size=size, files=batches)
    print(f"generated {summary.describe()} in {len(summary.files)} files under {landing}")
    log_file = out / "spark.log"
    spark = spark_logging_to(
        log_file,
        app_name=f"streamwarden-demo-{name}",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
    )
    print(
        f"starting local Spark (log: {log_file}); running examples/{EXAMPLES[name].config} "
        "on them, then draining\n",
        flush=True,
    )
    batches_seen: list[BatchStats] = []
    printer = ProgressPrinter(config)

    def on_progress(progress: dict[str, Any], stats: BatchStats | None) -> None:
        printer(progress, stats)
        if stats is not None:
            batches_seen.append(stats)

    Pipeline(config, spark).run(once=True, drain=True, on_progress=on_progress)
    expected = show_outcome(name, spark, config, summary)
    accounting = account_run(spark, config, summary.records, batches_seen)
    print(f"\naccounting: {accounting.describe()}")
    print("outputs: " + ", ".join(str(parquet_folder(s)) for s in config.sinks.values()))
    return 0 if accounting.balanced and expected else 1
