"""The folders a pipeline reads and writes must not overlap (checked at load, no I/O).

Two outputs in one folder lose data: each Parquet sink keeps its own record of the batches it
wrote there, and a batch that writes both skips the second as already written. A sink inside
the checkpoint, or the checkpoint inside a sink, mixes output files with Spark's logs; a sink
or the checkpoint inside the landing folder is read back as input (or, outside Spark's hidden
names, refused by the landing pattern only by luck); the landing folder inside an output is
deleted or rewritten with it. So every pair of these folders must be apart: neither the same
nor one inside the other.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["overlapping_folders"]


def overlapping_folders(folders: dict[str, Path]) -> list[str]:
    """One line per pair of ``folders`` (setting name -> folder) that are the same or nested,
    saying which and what to do; an empty list when all are apart."""
    named = [(name, _absolute(path)) for name, path in folders.items()]
    problems = []
    for i, (name_a, a) in enumerate(named):
        for name_b, b in named[i + 1 :]:
            if a == b:
                problems.append(
                    f"{name_a} and {name_b} are the same folder {str(a)!r}; give each its own "
                    "folder (outputs sharing one lose data, input and output mixed are read back)"
                )
            elif a in b.parents or b in a.parents:
                inner, outer = (name_a, name_b) if b in a.parents else (name_b, name_a)
                inner_path = a if inner == name_a else b
                outer_path = b if inner == name_a else a
                problems.append(
                    f"{inner} {str(inner_path)!r} is inside {outer} {str(outer_path)!r}; move "
                    "it beside, not inside (each folder is written, read or cleaned on its own)"
                )
    return problems


def _absolute(path: Path) -> Path:
    """``path`` made absolute and normalised (``..`` resolved by name, symlinks not followed:
    loading reads no file system)."""
    return Path(os.path.normpath(os.path.abspath(path)))
