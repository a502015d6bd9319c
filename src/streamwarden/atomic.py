"""Files streamwarden writes survive a crash: written under a temporary name, flushed to disk,
then renamed into place, so that a reader (or the next run) sees the old file or the new one,
never half of one. The temporary names start with a dot and end in ``.tmp``: Spark's file
source skips dot-names, and ``doctor`` knows such a file for what it is, a write a kill cut
short, never damage.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

__all__ = ["TMP_SUFFIX", "is_temporary", "remove_stale_temporaries", "write_atomically"]

#: How every temporary name of :func:`write_atomically` ends.
TMP_SUFFIX = ".tmp"


def write_atomically(path: Path, text: str | bytes, *, mode: int | None = None) -> Path:
    """Replaces ``path`` with ``text`` (UTF-8 if a string) in one rename, after an fsync of the
    data, and fsyncs the folder so that the rename itself survives a power cut. ``mode`` sets
    the file's permissions before it becomes visible (default: the process's umask)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}{TMP_SUFFIX}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    fd = os.open(tmp, flags, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # the umask may have taken bits away
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(path.parent)
    return path


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary file of :func:`write_atomically` (or of the older
    writers that named theirs ``.<name>.tmp``)."""
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def remove_stale_temporaries(folder: Path) -> int:
    """Removes the temporary files a killed write left in ``folder`` (not its subfolders);
    call it only while no other writer of ours works there (under the run lock). Returns how
    many it removed."""
    removed = 0
    if not folder.is_dir():
        return 0
    for child in folder.iterdir():
        if child.is_file() and is_temporary(child.name):
            with contextlib.suppress(FileNotFoundError):
                child.unlink()
                removed += 1
    return removed


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without folder handles
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
