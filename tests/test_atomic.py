"""Files streamwarden writes survive a kill mid-write (issue 19, defect 8): the old content
or the new, never half, and a temporary file left behind stops nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from streamwarden.atomic import is_temporary, remove_stale_temporaries, write_atomically
from streamwarden.pipeline.ownership import IDENTITY_FILE, check_ownership
from tests.support import pipeline_config


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "pipeline.json"
    write_atomically(target, "old\n")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pipeline.json"]


def test_a_process_killed_mid_write_leaves_the_old_file_whole(tmp_path):
    """The child stops (SIGSTOP) after writing half of the new content to its temporary file,
    and is then killed: the file keeps its old content, the temporary is recognisable."""
    target = tmp_path / "status.json"
    write_atomically(target, json.dumps({"batch": 1}))
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, signal, sys\n"
            "from pathlib import Path\n"
            "import streamwarden.atomic as a\n"
            "real = os.fdopen\n"
            "class Half:\n"
            "    def __init__(self, f): self.f = f\n"
            "    def __enter__(self): return self\n"
            "    def __exit__(self, *e): self.f.close()\n"
            "    def write(self, d): self.f.write(d[: len(d) // 2]); self.f.flush();"
            " os.kill(os.getpid(), signal.SIGSTOP)\n"
            "    def flush(self): pass\n"
            "    def fileno(self): return self.f.fileno()\n"
            "a.os.fdopen = lambda fd, mode: Half(real(fd, mode))\n"
            f'a.write_atomically(Path({str(target)!r}), \'{{"batch": 2, "more": "x"}}\')\n',
        ]
    )
    _, status = os.waitpid(child.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert json.loads(target.read_text()) == {"batch": 1}
    (left,) = [p for p in tmp_path.iterdir() if p != target]
    assert is_temporary(left.name)
    assert remove_stale_temporaries(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_a_temporary_left_beside_the_pipeline_record_does_not_stop_the_next_run(tmp_path):
    config = pipeline_config(tmp_path)
    folder = config.checkpoint.path / "streamwarden"
    check_ownership(config)
    (folder / f".{IDENTITY_FILE}.0123456789ab.tmp").write_text('{"operator": "sess')
    check_ownership(config)  # no error
    assert json.loads((folder / IDENTITY_FILE).read_text())["operator"] == "sessions"
    assert not [p for p in folder.iterdir() if is_temporary(p.name)]
