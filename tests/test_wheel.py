"""The wheel is all a driver host needs: it carries the engine jar, and an installed copy finds
it (``streamwarden jars``) along with the connector jars a config names."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamwarden.spark.engine_jar import engine_jar_path
from streamwarden.spark.jar_sets import JARS_DIR_VARIABLE, jars_dir

ROOT = Path(__file__).resolve().parent.parent
JAR_IN_WHEEL = "streamwarden/_engine/streamwarden-engine.jar"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once per test session with the dev environment's build
    backend (offline: no build isolation)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    [built] = out.glob("streamwarden-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway virtual environment with the wheel installed (no dependencies: they come
    from this environment's site-packages through a ``.pth`` line, after the venv's own)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "dev-dependencies.pth").write_text(site.getsitepackages()[0] + "\n")
    yield venv


def test_the_wheel_carries_the_engine_jar_as_built(wheel):
    with zipfile.ZipFile(wheel) as whl:
        assert whl.read(JAR_IN_WHEEL) == engine_jar_path().read_bytes()


@pytest.mark.soak
def test_an_installed_wheel_finds_its_own_engine_jar_and_the_connector_jars(installed):
    env = {**os.environ, JARS_DIR_VARIABLE: str(jars_dir())}
    done = subprocess.run(
        [str(installed / "bin" / "streamwarden"), "jars", str(ROOT / "examples" / "kafka.toml")],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    engine, *connectors = done.stdout.split()
    assert Path(engine).is_relative_to(installed)  # the installed copy, not the source tree
    assert Path(engine).read_bytes() == engine_jar_path().read_bytes()
    assert any("spark-sql-kafka" in Path(jar).name for jar in connectors)
    assert all(Path(jar).is_relative_to(jars_dir()) for jar in connectors)
