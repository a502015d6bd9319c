"""``streamwarden doctor CONFIG``: contradictions and missing deadlines in a pipeline's settings,
and what of the installation slows its start (``doctor/installation.py``).

Exit 2 when any finding is an error, 0 otherwise. ``run`` calls :func:`preflight` first (the
config's checks, not the installation's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.arguments import Subcommands
from streamwarden.doctor.findings import Finding
from streamwarden.errors import ConfigError

if TYPE_CHECKING:  # the config imports the operators, and so Spark: not at start-up
    from streamwarden.config.model import PipelineConfig

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
    from streamwarden.doctor.installation import installation_findings

    config = load_config(args.config)
    findings = diagnose(config) + installation_findings(config)
    if args.plan:
        findings += _plan_findings(config)
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


def _plan_findings(config: PipelineConfig) -> list[Finding]:
    from streamwarden.cli.offline import offline_spark
    from streamwarden.doctor.plan import check_plan
    from streamwarden.pipeline import Pipeline

    spark = offline_spark("doctor")
    return check_plan(Pipeline(config, spark).stream_frame())
