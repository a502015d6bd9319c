"""``streamwarden demo --example payments|logins``: an example's generated data through the
example's own config (``examples/<name>.toml``) on local Spark, its folders moved into the
demo's, drained so that every session closes and every partial match expires; then what it
wrote, against what the generator knows by construction.

(The pageviews example is the default demo, :mod:`streamwarden.local.demo_sessions`.)
"""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.local.demo_folder import replace_demo_folder
from streamwarden.local.examples.catalog import EXAMPLES, examples_folder, generate_example
from streamwarden.local.examples.logins import LoginsSummary
from streamwarden.local.examples.payments import PaymentsSummary
from streamwarden.operators.base import account_run
from streamwarden.operators.sessions.accounting import final_sessions
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.sinks.parquet import parquet_folder, read_output
from streamwarden.sources.files import landing_folder
from streamwarden.spark.log_file import spark_logging_to

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streamwarden.operators.base import BatchStats

__all__ = ["example_demo_command", "example_demo_config"]


def example_demo_config(name: str, out: Path) -> PipelineConfig:
    """Example ``name``'s config with its landing folder, sinks and checkpoint under ``out``,
    and 2 state partitions (the demo's 2 cores)."""
    path = examples_folder() / EXAMPLES[name].config
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
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
    landing = landing_folder(config.source)
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
    if isinstance(summary, PaymentsSummary):
        expected = _show_sessions(spark, config, summary)
    else:
        assert isinstance(summary, LoginsSummary)
        expected = _show_matches(spark, config, summary)
    expected &= _show_dead_letters(spark, config, _expected_reasons(summary))
    accounting = account_run(spark, config, summary.records, batches_seen)
    print(f"\naccounting: {accounting.describe()}")
    print("outputs: " + ", ".join(str(parquet_folder(s)) for s in config.sinks.values()))
    return 0 if accounting.balanced and expected else 1


def _show_sessions(spark: SparkSession, config: PipelineConfig, summary: PaymentsSummary) -> bool:
    revisions = read_output(spark, parquet_folder(config.sinks["sessions"]))
    if revisions is None:
        return _compare("final sessions", len(summary.sessions()), 0)
    final = final_sessions(revisions)
    print("\nthe largest sessions (final revisions):")
    final.orderBy(F.desc("total"), "account").select(
        "account",
        "session_start",
        "event_count",
        "revision",
        "total",
        "largest",
        "merchants",
        "first_country",
        "last_country",
        "cities",
    ).show(5, truncate=False)
    merged = revisions.where(F.size("merged_session_ids") > 0).select("session_id").distinct()
    same = _compare("final sessions", len(summary.sessions()), final.count())
    return _compare("sessions that merged others", len(summary.bridges), merged.count()) and same


def _show_matches(spark: SparkSession, config: PipelineConfig, summary: LoginsSummary) -> bool:
    matches = read_output(spark, parquet_folder(config.sinks["matches"]))
    if matches is None:
        return _compare("matches", len(summary.matches), 0)
    print("\nsome matches:")
    order = [c for c in ("match_start", "key", "user") if c in matches.columns]
    matches.orderBy(*order).show(5, truncate=False)
    return _compare("matches", len(summary.matches), matches.count())


def _show_dead_letters(spark: SparkSession, config: PipelineConfig, expected: Counter[str]) -> bool:
    frame = read_output(spark, parquet_folder(config.sinks["dead_letters"]))
    rows = [] if frame is None else frame.groupBy("reason").count().collect()
    got = Counter({str(r["reason"]): int(r["count"]) for r in rows})
    print("\ndead letters by reason (written / put in by construction):")
    for reason in sorted(expected.keys() | got.keys()):
        mark = "" if got[reason] == expected[reason] else "  <- differs"
        print(f"  {reason:<22} {got[reason]:>5,} / {expected[reason]:,}{mark}")
    return got == expected


def _expected_reasons(summary: PaymentsSummary | LoginsSummary) -> Counter[str]:
    reasons = Counter(h.reason.value for h in summary.hostile)
    if isinstance(summary, PaymentsSummary) and summary.too_late:
        reasons["too_late"] += len(summary.too_late)
    return reasons


def _compare(what: str, expected: int, got: int) -> bool:
    note = "as put in" if expected == got else f"but {expected:,} were put in"
    print(f"{what}: {got:,} ({note})")
    return expected == got
