"""The examples run as a user runs them: the example's own config (its folders moved under a
test folder) through the command line, on data its generator wrote."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from tests.support import run_command

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def example_config(name: str, root: Path) -> Path:
    """``examples/<name>.toml`` with its landing folder, sinks and checkpoint under ``root``
    (YAML, which reads JSON), ready for ``streamwarden run``."""
    data: dict[str, Any] = tomllib.loads((EXAMPLES / f"{name}.toml").read_text())
    data["source"]["path"] = str(root / "landing")
    data["sinks"] = {n: {**s, "path": str(root / n)} for n, s in data["sinks"].items()}
    data["checkpoint"]["path"] = str(root / "checkpoint")
    data["spark"] = {**data.get("spark", {}), "shuffle_partitions": 2}
    data["monitoring"] = {**data.get("monitoring", {}), "prometheus_port": "off"}
    path = root / f"{name}.yaml"
    path.write_text(json.dumps(data, default=str))
    return path


def run_cli(config: Path) -> subprocess.CompletedProcess[str]:
    """``streamwarden run CONFIG --once --drain``, its output captured."""
    return subprocess.run(
        run_command(config, "--once", "--drain"), capture_output=True, text=True, timeout=900
    )
