"""The wheel is all a user needs: it carries the engine jar and the list of the connector jars,
is never built without the engine jar, and installed into a fresh virtual environment it runs
pipelines from a folder outside the source tree: files -> Parquet with the core dependencies
alone (no Kafka, Delta, PostgreSQL or matplotlib client importable), and Kafka -> Kafka with the
``kafka`` extra, its connector jars fetched from Maven Central into a cache of the test's own
(no source tree, no ``STREAMWARDEN_JARS_DIR``).

Installing the dependencies from an index into each fresh environment would take minutes; the
environments get them instead from this environment's site-packages, but only the
distributions the wheel's own metadata requires (and theirs, transitively): a folder of links
to exactly those, named by a ``.pth`` line. So a core environment sees pyspark and its
dependencies, and not confluent_kafka, delta, psycopg or matplotlib.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Callable, Iterable
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from streamwarden.extras import EXTRAS
from streamwarden.spark.engine_jar import engine_jar_path
from streamwarden.spark.jar_sets import JARS_DIR_VARIABLE, REPOSITORY_VARIABLE
from tests.kafka.support import committed_records, produce, topic_name
from tests.support import PAGEVIEW_TOML, pageview

ROOT = Path(__file__).resolve().parent.parent
JAR_IN_WHEEL = "streamwarden/_engine/streamwarden-engine.jar"
#: Every top-level module the extras bring: none is importable in a core environment.
EXTRA_MODULES = sorted(m for modules in EXTRAS.values() for m in modules)
CORE_MODULES = ["pyspark", "pyarrow", "pandas", "pydantic", "yaml", "prometheus_client"]


def _build_wheel(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``pip wheel`` of ``source`` with this environment's build backend (offline: no build
    isolation)."""
    return subprocess.run(
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
            str(source),
        ],
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once per test session."""
    out = tmp_path_factory.mktemp("wheel")
    built = _build_wheel(ROOT, out)
    assert built.returncode == 0, built.stderr
    [path] = out.glob("streamwarden-*.whl")
    return path


def _requirements(wheel: Path, extras: Iterable[str]) -> list[Requirement]:
    """The wheel's declared requirements, for the core and ``extras``."""
    with zipfile.ZipFile(wheel) as whl:
        [name] = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(whl.read(name).decode())
    wanted = ["", *extras]
    requirements = [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]
    return [
        r
        for r in requirements
        if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in wanted)
    ]


def _distributions(requirements: list[Requirement]) -> list[importlib.metadata.Distribution]:
    """The distributions of this environment that ``requirements`` need, transitively."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(requirements)
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in done:
            continue
        done.add(key)
        dist = importlib.metadata.distribution(requirement.name)
        found[key[0]] = dist
        wanted = ["", *requirement.extras]
        for line in dist.requires or []:
            needed = Requirement(line)
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in wanted):
                todo.append(needed)
    return list(found.values())


def _expose(dists: list[importlib.metadata.Distribution], folder: Path) -> None:
    """Links every top-level file and folder of ``dists`` (modules and metadata) into
    ``folder``."""
    folder.mkdir()
    for dist in dists:
        tops = {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}
        for top in tops:
            link = folder / top
            if not link.exists():
                link.symlink_to(Path(str(dist.locate_file(top))))


def _fresh_venv(wheel: Path, folder: Path, extras: tuple[str, ...]) -> Path:
    """A virtual environment with the wheel installed and exactly the distributions it
    requires with ``extras``, taken from this environment; returns its ``bin``."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    install = ["install", "--quiet", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(  # this environment's pip installs into the new one (no pip of its own)
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        check=True,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    exposed = folder / "dependencies"
    _expose(_distributions(_requirements(wheel, extras)), exposed)
    Path(purelib, "dependencies.pth").write_text(f"{exposed}\n")
    return folder / "bin"


def _clean_env(tmp: Path) -> dict[str, str]:
    """This process's environment without what would lead an installed copy back to the
    source tree or its jars; the user's cache under ``tmp``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {JARS_DIR_VARIABLE, REPOSITORY_VARIABLE, "PYTHONPATH", "VIRTUAL_ENV"}
    }
    return {**env, "XDG_CACHE_HOME": str(tmp / "cache"), "HOME": str(tmp / "home")}


Run = Callable[..., subprocess.CompletedProcess[str]]


def _runner(bin_folder: Path, cwd: Path, env: dict[str, str]) -> Run:
    def run(*args: str, program: str = "streamwarden") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_folder / program), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    return run


def _importable(run: Run) -> set[str]:
    """Which of the core's and the extras' modules the environment of ``run`` can import."""
    probe = "import importlib.util as u; print(*(m for m in "
    probe += f"{EXTRA_MODULES + CORE_MODULES!r} if u.find_spec(m)))"
    return set(run("-c", probe, program="python").stdout.split())


def test_the_wheel_carries_the_engine_jar_as_built_and_the_jar_list(wheel):
    with zipfile.ZipFile(wheel) as whl:
        assert whl.read(JAR_IN_WHEEL) == engine_jar_path().read_bytes()
        listed = whl.read("streamwarden/spark/jar_sets.txt").decode()
    assert listed == (ROOT / "src" / "streamwarden" / "spark" / "jar_sets.txt").read_text()


def test_a_wheel_is_not_built_without_the_engine_jar(tmp_path):
    copy = tmp_path / "clone"
    copy.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(
        ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("*.jar", "__pycache__")
    )
    built = _build_wheel(copy, tmp_path / "out")
    assert built.returncode != 0
    assert "no engine jar at src/streamwarden/_engine/streamwarden-engine.jar" in built.stderr
    assert "scripts/build_engine.sh" in built.stderr and "make setup" in built.stderr
    assert not list((tmp_path / "out").glob("*.whl"))


FILES_CONFIG = (
    """
[source]
kind = "files"
path = "landing"
[sinks.sessions]
path = "out/sessions"
[sinks.dead_letters]
path = "out/dead_letters"
[checkpoint]
path = "out/checkpoint"
[monitoring]
prometheus_port = "off"
"""
    + PAGEVIEW_TOML
)


def test_the_core_install_runs_a_files_to_parquet_pipeline_without_any_extra(
    wheel, tmp_path_factory
):
    work = tmp_path_factory.mktemp("core-install")
    bin_folder = _fresh_venv(wheel, work / "venv", extras=())
    user = work / "user"
    (user / "landing").mkdir(parents=True)
    (user / "pipeline.toml").write_text(FILES_CONFIG)
    events = [pageview("u1", 0), pageview("u1", 5, page=2), pageview("u1", 120), "not json"]
    (user / "landing" / "a.jsonl").write_text("\n".join(events) + "\n")
    run = _runner(bin_folder, user, _clean_env(work))

    assert _importable(run) == set(CORE_MODULES)

    done = run("run", "pipeline.toml", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    sessions = list((user / "out" / "sessions").rglob("*.parquet"))
    dead = list((user / "out" / "dead_letters").rglob("*.parquet"))
    assert sessions and dead  # the session closed by the event 2 h later; the bad line
    assert not (work / "cache").exists()  # files -> Parquet fetches no jars


KAFKA_CONFIG = (
    """
[source]
kind = "kafka"
topics = ["{source}"]
[kafka]
bootstrap_servers = "{servers}"
[sinks.sessions]
kind = "kafka"
topic = "{sessions}"
[sinks.dead_letters]
path = "out/dead_letters"
[checkpoint]
path = "out/checkpoint"
[monitoring]
prometheus_port = "off"
"""
    + PAGEVIEW_TOML
)


def test_the_kafka_extra_runs_a_kafka_pipeline_fetching_its_connector_jars_itself(
    wheel, tmp_path_factory, kafka_broker
):
    work = tmp_path_factory.mktemp("kafka-install")
    bin_folder = _fresh_venv(wheel, work / "venv", extras=("kafka",))
    source, sessions = topic_name("wheel-pageviews"), topic_name("wheel-sessions")
    kafka_broker.create_topic(source)
    kafka_broker.create_topic(sessions)
    produce(kafka_broker, source, [pageview("u1", 0), pageview("u1", 5), pageview("u1", 120)])
    user = work / "user"
    user.mkdir()
    config = KAFKA_CONFIG.format(
        source=source, sessions=sessions, servers=kafka_broker.bootstrap_servers
    )
    (user / "pipeline.toml").write_text(config)
    run = _runner(bin_folder, user, _clean_env(work))
    assert _importable(run) == {*CORE_MODULES, *EXTRAS["kafka"]}

    done = run("run", "pipeline.toml", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = committed_records(kafka_broker, sessions)
    assert record["key"] == "u1"
    [folder] = (work / "cache" / "streamwarden" / "jars").glob("kafka-*")
    assert (folder / "spark-sql-kafka-0-10_2.13-4.2.0.jar").is_file()

    jars = run("jars", "pipeline.toml")  # what a spark-submit line would ship: no source tree
    assert jars.returncode == 0, jars.stderr
    engine, *connectors = jars.stdout.split()
    assert Path(engine).is_relative_to(work / "venv")
    assert connectors and all(Path(jar).parent == folder for jar in connectors)
