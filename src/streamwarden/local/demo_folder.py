"""The demo's working folder: emptied before each run, but only if an earlier demo made it.

``streamwarden demo --out DIR`` replaces ``DIR`` entirely. A mistyped ``--out`` (``.``, a home
folder, a project) must not cost the user their files, so the demo marks the folders it makes
and refuses to empty any other folder that holds something.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from streamwarden.errors import UsageError

__all__ = ["MARKER", "replace_demo_folder"]

#: File the demo leaves in its folder, so that a later demo knows it may empty it.
MARKER = ".streamwarden-demo"


def replace_demo_folder(out: Path) -> Path:
    """Empties ``out`` (made by an earlier demo, or empty, or absent) and marks it as the demo's.

    Raises :class:`UsageError` if ``out`` is a file, or a folder with content that no demo made.
    """
    out = out.resolve()
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; give a folder for the demo's output")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise UsageError(
            f"--out {str(out)!r} is not empty and was not made by the demo (it has no {MARKER} "
            "file); the demo empties its folder before it runs, so give a new or empty folder"
        )
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / MARKER).write_text("made by `streamwarden demo`; the next demo may empty it\n")
    return out
