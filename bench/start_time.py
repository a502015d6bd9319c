"""What a pipeline's start costs, and two things that cut it: PySpark's record of Python call
sites switched off (``QUERY_BUILDING`` in ``src/streamwarden/spark/session.py``) and a class
archive mapped by the JVM (``src/streamwarden/spark/class_archive.py``).

Usage::

    .venv/bin/python bench/start_time.py [--builds 10] [--starts 6]

PySpark (4.x) wraps every Column and DataFrame call so that the JVM knows the Python line that
made it (``spark.python.sql.dataFrameDebugging.enabled``, on unless switched off): each wrapped
call asks the JVM for the active session, its setting and the origin object, then sets and
clears the origin. streamwarden switches it off. Every start, restart, drain and supervised
restart builds the query once, in the process that runs it.

1. **Building** (one process, one session): the query of ``examples/pageviews.toml`` and of
   ``examples/patterns.toml`` (``Pipeline.stream_frame``: source, validation, operator, sink
   columns) built ``--builds`` times per setting, alternating (ABBA), after one unmeasured
   build of each (the JVM loads its classes on the first). Per build: wall time and round trips
   to the JVM (py4j commands sent).
2. **Starting, call sites** (a fresh process each time): ``streamwarden run CONFIG --once`` of
   the pageviews example over one landing file of 2,000 events, ``--starts`` times per setting,
   alternating (ABBA; the setting given in the config's ``[spark.conf]``): seconds from the
   process start to its first batch committed (``commits/0`` in the checkpoint), and to its
   exit.
3. **Starting, class archive**: the same run ``--starts`` times with the installation's class
   archive and without (``$STREAMWARDEN_JVM_CACHE`` an empty folder), alternating (ABBA). The
   archive is made first if it is missing.

Each baseline (PySpark's default, no archive) runs in the same script, on the same files,
alternating with what it is compared to. Results: ``bench/results/start-time.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
PYTHON = ROOT / ".venv" / "bin" / "python"
CALL_SITES = "spark.python.sql.dataFrameDebugging.enabled"
SETTINGS = {"recorded": "true", "not recorded": "false"}  # PySpark's default, streamwarden's
EXAMPLES = ("pageviews", "patterns")
T = TypeVar("T")


def in_turn(settings: dict[str, T], turn: int) -> list[tuple[str, T]]:
    """The settings in the order of turn ``turn``: forward, then backward (ABBA), so that
    neither setting always runs right after the other."""
    items = list(settings.items())
    return items if turn % 2 == 0 else items[::-1]


def example_folder(root: Path, name: str, call_sites: str | None = None) -> Path:
    """``examples/NAME.toml`` in a folder of its own under ``root``, with one landing file of
    2,000 events; ``call_sites`` (``"true"``/``"false"``) is added to its ``[spark.conf]``."""
    from streamwarden.local.generator import TrafficSpec, generate_traffic

    folder = root / name / (call_sites or "session")
    folder.mkdir(parents=True)
    text = (ROOT / "examples" / f"{name}.toml").read_text()
    if call_sites is not None:
        text = text.replace("[spark.conf]", f'[spark.conf]\n"{CALL_SITES}" = "{call_sites}"', 1)
    (folder / "pipeline.toml").write_text(text)
    spec = TrafficSpec(users=300, events=2_000, rate_per_second=0.5, events_per_file=2_000)
    generate_traffic(spec, folder / "landing")
    return folder


@contextmanager
def counted_round_trips() -> Iterator[list[int]]:
    """Counts the commands PySpark sends to the JVM while the block runs."""
    from py4j.clientserver import ClientServerConnection

    count = [0]
    original = ClientServerConnection.send_command

    def send_command(self: ClientServerConnection, command: str, *args: Any) -> Any:
        count[0] += 1
        return original(self, command, *args)

    ClientServerConnection.send_command = send_command  # type: ignore[method-assign]
    try:
        yield count
    finally:
        ClientServerConnection.send_command = original  # type: ignore[method-assign]


def call_sites_recorded(value: str) -> None:
    """Switches the record of call sites in this process. The setting is static (read when the
    session starts) and PySpark keeps what it read in a module global, the only thing its
    wrappers consult: the in-process comparison sets that global. The whole starts (part 2)
    use the setting itself."""
    import pyspark.errors.utils

    pyspark.errors.utils._enable_debugging_cache = value == "true"


def builds(root: Path, count: int) -> dict[str, dict[str, dict[str, float]]]:
    """Per example and setting: median and range of a query build's seconds, its round trips."""
    from streamwarden.config import load_config
    from streamwarden.pipeline import Pipeline
    from streamwarden.spark.session import build_spark_session

    spark = build_spark_session(app_name="start-time", extra_conf={"spark.ui.enabled": "false"})
    pipelines = {
        name: Pipeline(load_config(example_folder(root, name) / "pipeline.toml"), spark)
        for name in EXAMPLES
    }
    samples: dict[str, dict[str, list[tuple[float, int]]]] = {
        name: {label: [] for label in SETTINGS} for name in EXAMPLES
    }
    for name, pipeline in pipelines.items():
        pipeline.stream_frame()  # unmeasured: the JVM's first build loads its classes
        for i in range(count):
            for label, value in in_turn(SETTINGS, i):
                call_sites_recorded(value)
                with counted_round_trips() as trips:
                    t0 = time.perf_counter()
                    pipeline.stream_frame()
                    seconds = time.perf_counter() - t0
                samples[name][label].append((seconds, trips[0]))
    spark.stop()
    return {
        name: {
            label: summary([s for s, _ in runs], [t for _, t in runs])
            for label, runs in got.items()
        }
        for name, got in samples.items()
    }


def summary(seconds: list[float], trips: list[int] | None = None) -> dict[str, float]:
    out = {
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "max_s": max(seconds),
        "runs": len(seconds),
    }
    if trips:
        out["round_trips"] = statistics.median(trips)
    return out


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[bytes]) -> float | None:
    """Seconds until ``condition`` holds, polled every 20 ms; None if the process ended first."""
    t0 = time.perf_counter()
    while not condition():
        if process.poll() is not None:
            return None
        time.sleep(0.02)
    return time.perf_counter() - t0


def one_start(folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """``streamwarden run --once`` on a fresh checkpoint: seconds to the first batch committed
    and to the process's exit."""
    shutil.rmtree(folder / "out", ignore_errors=True)
    command = [str(PYTHON), "-m", "streamwarden.cli.main", "run", "pipeline.toml", "--once"]
    t0 = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=folder,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = wait_for(lambda: (folder / "out" / "checkpoint" / "commits" / "0").exists(), process)
    code = process.wait()
    total = time.perf_counter() - t0
    if code != 0 or first is None:
        raise RuntimeError(f"streamwarden run in {folder} failed (exit {code}); see its log there")
    return first, total


def starts(
    variants: dict[str, tuple[Path, dict[str, str]]], count: int
) -> dict[str, dict[str, dict[str, float]]]:
    """Per variant (label -> run folder, environment): ``count`` starts, the variants in turn."""
    firsts: dict[str, list[float]] = {label: [] for label in variants}
    totals: dict[str, list[float]] = {label: [] for label in variants}
    for i in range(count):
        for label, (folder, env) in in_turn(variants, i):
            first, total = one_start(folder, env)
            firsts[label].append(first)
            totals[label].append(total)
    return {
        label: {"first_batch": summary(firsts[label]), "exit": summary(totals[label])}
        for label in variants
    }


def call_site_starts(root: Path, count: int) -> dict[str, dict[str, dict[str, float]]]:
    return starts(
        {label: (example_folder(root, "pageviews", v), {}) for label, v in SETTINGS.items()}, count
    )


def archive_starts(root: Path, count: int) -> dict[str, dict[str, dict[str, float]]]:
    """Starts with the installation's class archive (made first, in a process of its own, if
    missing) and with none."""
    from streamwarden.spark.class_archive import CACHE_VARIABLE, cache_dir

    made = subprocess.run([str(PYTHON), "-m", "streamwarden.cli.class_archive"], check=False)
    if made.returncode != 0:
        raise RuntimeError("could not make the class archive (see above)")
    folder = example_folder(root, "pageviews")
    (root / "no-archive").mkdir()
    variants = {
        "no archive": (folder, {CACHE_VARIABLE: str(root / "no-archive")}),
        "archive": (folder, {CACHE_VARIABLE: str(cache_dir())}),
    }
    return starts(variants, count)


def report(document: dict[str, Any]) -> str:
    def seconds(got: dict[str, float]) -> str:
        return f"{got['median_s']:.1f} ({got['min_s']:.1f}-{got['max_s']:.1f})"

    lines = [
        "| what | baseline | streamwarden | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, got in document["builds"].items():
        on, off = got["recorded"], got["not recorded"]
        lines.append(
            f"| {name}: build the query, median ms (min-max); call sites recorded / not | "
            f"{on['median_s'] * 1000:.0f} ({on['min_s'] * 1000:.0f}-{on['max_s'] * 1000:.0f}) | "
            f"{off['median_s'] * 1000:.0f} ({off['min_s'] * 1000:.0f}-{off['max_s'] * 1000:.0f})"
            f" | {off['median_s'] / on['median_s']:.2f}x |"
        )
        lines.append(
            f"| {name}: round trips to the JVM; call sites recorded / not | "
            f"{on['round_trips']:.0f} | {off['round_trips']:.0f} | "
            f"{off['round_trips'] / on['round_trips']:.2f}x |"
        )
    for key, base, ours, what in (
        ("call_site_starts", "recorded", "not recorded", "call sites recorded / not"),
        ("archive_starts", "no archive", "archive", "no class archive / archive"),
    ):
        for part, event in (("first_batch", "first batch committed"), ("exit", "exit")):
            on, off = document[key][base][part], document[key][ours][part]
            lines.append(
                f"| `run --once`, start to {event}, median s (min-max); {what} | "
                f"{seconds(on)} | {seconds(off)} | {off['median_s'] / on['median_s']:.2f}x |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=int, default=10, help="measured builds per setting")
    parser.add_argument("--starts", type=int, default=6, help="process starts per setting")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="start-time-") as tmp:
        root = Path(tmp)
        document = {
            "args": vars(args),
            "builds": builds(root / "builds", args.builds),
            "call_site_starts": call_site_starts(root / "call-sites", args.starts),
            "archive_starts": archive_starts(root / "archive", args.starts),
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "start-time.json").write_text(json.dumps(document, indent=2) + "\n")
    table = report(document)
    (RESULTS / "start-time.md").write_text(table)
    print(table)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
