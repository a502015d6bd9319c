"""``streamwarden status`` on a real running pipeline: it finds the pipeline from its config,
shows the current batch, recent progress and the slowest task, and thread dumps on request,
through the Spark UI's REST API (docs/failure-modes.md#stuck-query). The same pipeline shows
that its driver, UI included, cannot be reached from another host (#exposed-driver)."""

from __future__ import annotations

import ipaddress
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.cli.status import format_status
from streamwarden.monitoring.progress_log import BatchRecord, progress_dir, read_status
from streamwarden.monitoring.status import PipelineStatus
from tests.monitoring.test_leak_alarm import batch
from tests.support import pageview, write_batches

CONFIG = """
name = "status-test"
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
[source]
path = "landing"
max_files_per_trigger = 1
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
trigger_interval = "1s"
[spark.conf]
"spark.ui.port" = "{port}"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(condition, process: subprocess.Popen[bytes], what: str, timeout_s: float = 300):
    """Polls ``condition`` (a condition, not a guess at timing) while the pipeline runs."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert process.poll() is None, f"the pipeline ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C, as a user stops a pipeline; SIGKILL if it does not end in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def running_pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("status")
    config = root / "pipeline.toml"
    config.write_text(CONFIG.format(port=free_port()))
    write_batches(
        root / "landing", [[pageview(f"u{i}", b * 5 + i) for i in range(5)] for b in range(2)]
    )
    command = [sys.executable, "-m", "streamwarden.cli.main", "run", str(config)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    folder = progress_dir(root / "checkpoint")

    def two_batches_done():
        status = read_status(folder)
        return status if status and status.get("last_batch", -1) >= 1 else None

    try:
        wait_until(two_batches_done, process, "two batches")
        yield config, process, folder
    finally:
        stop(process)


def test_status_shows_the_pipeline_its_current_batch_and_recent_progress(running_pipeline, capsys):
    config, _, folder = running_pipeline
    assert main(["status", str(config)]) == 0
    out = capsys.readouterr().out
    published = read_status(folder)
    assert "pipeline 'status-test': running (pid" in out
    assert published["app_id"] in out and published["ui_url"] in out
    assert "current batch: " in out and "slowest running task: " in out
    assert "batch     0 | in        5" in out and "batch     1 | in        5" in out


def test_status_with_threads_dumps_the_driver_threads(running_pipeline, capsys):
    config, _, _ = running_pipeline
    assert main(["status", str(config), "--threads"]) == 0
    out = capsys.readouterr().out
    assert "threads of executor driver:" in out
    assert '"stream execution thread for status-test' in out
    assert "      at " in out  # stack frames


def non_loopback_addresses() -> list[str]:
    """This host's own addresses other than loopback and link-local (``hostname -I``)."""
    hostname = shutil.which("hostname")
    if hostname is None:
        return []
    words = subprocess.run([hostname, "-I"], capture_output=True, text=True).stdout.split()
    addresses = [ipaddress.ip_address(w) for w in words if ":" in w or "." in w]
    return [str(a) for a in addresses if not (a.is_loopback or a.is_link_local)]


def listening_addresses(pid: int) -> set[str]:
    """The local addresses of TCP sockets in LISTEN state owned by ``pid`` or its children
    (the pipeline's JVM is a child of its Python process), from /proc."""
    pids = [pid, *(int(p) for p in _children(pid))]
    inodes = set()
    for p in pids:
        for fd in Path(f"/proc/{p}/fd").iterdir():
            target = fd.readlink() if fd.is_symlink() else Path()
            if str(target).startswith("socket:["):
                inodes.add(str(target)[8:-1])
    found = set()
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.add(_address(fields[1].split(":")[0], width))
    return found


def _children(pid: int) -> list[str]:
    return [
        child
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def _address(hex_address: str, width: int) -> str:
    """/proc/net/tcp's address: 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(words if width == 16 else words[:4])
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is 127.0.0.1
    return str(mapped or address)


def test_the_driver_and_its_ui_listen_on_loopback_only(running_pipeline):
    _, process, folder = running_pipeline
    outward = non_loopback_addresses()
    if not outward:
        pytest.skip("this host has no address but loopback: nothing to reach the UI from")
    port = urllib.parse.urlsplit(read_status(folder)["ui_url"]).port
    with socket.create_connection(("127.0.0.1", port), timeout=10):
        pass  # the UI is up (status uses it) ...
    for address in outward:  # ... and refuses every other address of this host
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((address, port), timeout=10).close()
    listening = listening_addresses(process.pid)
    assert listening, "found no listening socket of the pipeline at all"
    assert all(ipaddress.ip_address(a).is_loopback for a in listening), listening


def test_the_ui_has_no_kill_links(running_pipeline):
    _, _, folder = running_pipeline
    published = read_status(folder)
    base = f"http://127.0.0.1:{urllib.parse.urlsplit(published['ui_url']).port}"
    with urllib.request.urlopen(
        f"{base}/api/v1/applications/{published['app_id']}/environment", timeout=60
    ) as response:
        environment = json.loads(response.read())
    settings = dict(environment["sparkProperties"])
    assert settings["spark.ui.killEnabled"] == "false"


def test_a_stopped_pipeline_says_so_and_keeps_its_last_progress(running_pipeline, capsys):
    config, process, folder = running_pipeline
    stop(process)
    assert read_status(folder)["state"] == "stopped"
    assert main(["status", str(config)]) == 0
    out = capsys.readouterr().out
    assert "'status-test': stopped" in out and "batch     1 |" in out
    assert "last completed batch: " in out
    # nothing live is claimed for a process that has ended
    assert "current batch" not in out and "metrics:" not in out and "UI http" not in out
    assert main(["status", str(config), "--threads"]) == 0
    out = capsys.readouterr().out
    assert "no thread dumps: --threads needs the pipeline running" in out


def test_ctrl_c_stops_the_pipeline_with_one_line_and_exit_code_0(running_pipeline):
    _, process, _ = running_pipeline
    stop(process)  # SIGINT, as Ctrl-C in a terminal
    assert process.stderr is not None
    err = process.stderr.read().decode()
    assert process.returncode == 0, err
    assert "Stopped on SIGINT: the checkpoint is consistent" in err
    assert "Traceback" not in err and "py4j" not in err.lower()


def test_status_of_something_that_is_no_pipeline_is_a_usage_error(tmp_path, capsys):
    assert main(["status", str(tmp_path / "nothing.txt")]) == 2
    assert "neither a pipeline config" in capsys.readouterr().err


def test_the_recent_batches_stay_in_columns_whatever_the_counts():
    recent = [
        BatchRecord(batch(7, 12, 30)),
        BatchRecord(batch(8, 12_345_678, 1_234_567_890)),
        BatchRecord(batch(1_000_000, 0, 0)),
    ]
    text = format_status(PipelineStatus({"query": "q", "state": "stopped"}, recent))
    rows = [line for line in text.splitlines() if line.startswith("  batch")]
    assert len(rows) == 3
    assert len({tuple(i for i, c in enumerate(row) if c == "|") for row in rows}) == 1, rows
    assert "in 12,345,678" in rows[1] and "state rows 1,234,567,890" in rows[1]


def test_a_pipeline_with_no_batch_yet_shows_an_empty_list():
    text = format_status(PipelineStatus({"query": "q", "state": "stopped"}, []))
    assert text.splitlines()[-1] == "recent batches:"
