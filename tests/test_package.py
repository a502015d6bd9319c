"""The top-level package: the public API importable from ``streamwarden``, loaded lazily."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import streamwarden
from streamwarden.extras import EXTRAS
from streamwarden.operators.patterns import detect
from streamwarden.operators.sessions import sessionize
from streamwarden.schema import Schema
from streamwarden.validation.api import validate

ROOT = Path(__file__).resolve().parent.parent
EXTRA_MODULES = sorted(m for modules in EXTRAS.values() for m in modules)


def test_the_version_is_the_one_the_project_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert streamwarden.__version__ == declared


def test_every_name_in_all_is_importable_from_the_top():
    for name in streamwarden.__all__:
        assert getattr(streamwarden, name) is not None
    assert streamwarden.sessionize is sessionize and streamwarden.detect is detect
    assert streamwarden.Schema is Schema and streamwarden.validate is validate


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'sessionise'"):
        _ = streamwarden.sessionise


def test_importing_the_package_does_not_start_importing_spark():
    code = "import sys, streamwarden; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_files_pipeline_s_path_imports_no_extra_s_module():
    """The core install has no connector clients: loading a files -> Parquet config, asking
    for its jars and importing the runner and the CLI must not import one (the wheel test runs
    such a pipeline where they are missing; this says which import went wrong, in a second)."""
    config = str(ROOT / "examples" / "pageviews.toml")
    code = (
        "import sys, json\n"
        "from streamwarden.config import load_config\n"
        "from streamwarden.plan import PipelinePlan\n"
        "import streamwarden.cli.main, streamwarden.cli.run, streamwarden.pipeline.runner\n"
        f"assert PipelinePlan.of(load_config({config!r})).jars == ()\n"
        f"print(json.dumps(sorted(m for m in {EXTRA_MODULES!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_dir_lists_the_exports_before_they_are_loaded():
    exports = {"Schema", "validate", "sessionize", "detect", "Pattern", "build_spark_session"}
    assert exports <= set(dir(streamwarden))


def test_the_command_line_reports_its_version(capsys):
    from streamwarden.cli.main import main

    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.strip() == f"streamwarden {streamwarden.__version__}"
