"""``streamwarden doctor CONFIG``: contradictions and missing deadlines in a pipeline's settings,
what a sample of its input would get from validation (on a local Spark session,
``doctor/input_sample.py``), and what of the installation slows its start
(``doctor/installation.py``).

Exit 2 when any finding is an error, 0 otherwise. ``run`` calls :func:`preflight` first (the
config's checks, not the input sample's nor the installation's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.arguments import Subcommands
from streamwarden.doctor.findings import Finding
from streamwarden.errors import ConfigError, StreamwardenError

if TYPE_CHECKING:  # the config imports the operators, and so Spark: not at start-up
    from pyspark.sql import SparkSession

    from streamwarden.config.model import PipelineConfig
    from streamwarden.plan import PipelinePlan

__all__ = ["preflight", "register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "doctor", help="check a pipeline config for memory, partition and state-deadline problems"
    )
    parser.add_argument("config", type=Path, help="pipeline config (.toml or .yaml)")
    parser.add_argument(
        "--plan",
        action="store_true",
        help="also build the query on local Spark and check its plan (slower)",
    )
    parser.set_defaults(handler=doctor_command)


def doctor_command(args: argparse.Namespace) -> int:
    from streamwarden.config import load_config
    from streamwarden.doctor import Severity, diagnose, render_findings
    from streamwarden.doctor.input_sample import check_input_sample
    from streamwarden.doctor.installation import installation_findings

    config = load_config(args.config)
    findings = diagnose(config)
    spark = _doctor_spark(config)  # one session for the input sample and the plan
    findings += check_input_sample(config, spark) + installation_findings(config)
    if args.plan:
        findings += _plan_findings(config, spark)
    if not findings:
        print(f"{args.config}: no findings")
        return 0
    print(render_findings(findings))
    return 2 if any(f.severity == Severity.ERROR for f in findings) else 0


def preflight(config: PipelineConfig, config_path: Path) -> None:
    """Prints warnings to stderr; raises :class:`ConfigError` (exit 2) if there is an error."""
    from streamwarden.doctor import Severity, diagnose, render_findings

    findings = diagnose(config, connections=False)  # run checked them just before
    errors = [f for f in findings if f.severity == Severity.ERROR]
    if errors:
        raise ConfigError(
            f"config {str(config_path)!r} has problems that would fail the run:\n"
            + render_findings(errors)
            + f"\n(run `streamwarden doctor {config_path}` to see all findings)"
        )
    for finding in findings:
        print(finding.render(), file=sys.stderr)


def _doctor_spark(config: PipelineConfig) -> SparkSession:
    """A local session with the jars and Spark settings a run of ``config`` gets (the Kafka
    reader's, Delta's), so that the sample is read and the plan built as the run would."""
    from streamwarden.cli.offline import offline_spark
    from streamwarden.plan import PipelinePlan

    conf, jars = _session_parts(PipelinePlan.of(config))
    return offline_spark("doctor", conf=conf, jars=jars)


def _session_parts(plan: PipelinePlan) -> tuple[dict[str, str], tuple[str, ...]]:
    """The plan's Spark settings and jars. When some jars are missing (a finding of
    :func:`diagnose` names them, with the fix): ``[spark.conf]`` alone (not a part's settings
    that name its missing classes) and the source's jars if they are there, else none; the
    sample then says why it cannot be read, if it cannot."""
    config = plan.config
    try:
        return plan.spark_conf(), plan.jars
    except StreamwardenError:
        pass
    try:
        jars = tuple(plan.source.jars(config.source, config.context))
    except StreamwardenError:
        jars = ()
    return dict(config.spark.conf), jars


def _plan_findings(config: PipelineConfig, spark: SparkSession) -> list[Finding]:
    from streamwarden.doctor.plan import check_plan
    from streamwarden.pipeline import Pipeline

    return check_plan(Pipeline(config, spark).stream_frame())
