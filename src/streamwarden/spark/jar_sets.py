"""Jar sets: where each set's jars are, and their fetch when an installed package lacks them.

A set (``kafka``, ``kafka-broker``, ``delta``, ``postgres``) is a folder of jars with a
``.fetched`` stamp written last; its exact artifacts ship with the package
(:mod:`streamwarden.spark.maven`). The folder of a set, the first that applies:

1. ``$STREAMWARDEN_JARS_DIR/<set>/`` when that variable is set: a folder of your own, filled
   with ``STREAMWARDEN_JARS_DIR=<folder> streamwarden jars --fetch`` (or by hand), for hosts
   without network or a folder shared by many installations;
2. ``<repository>/.cache/jars/<set>/`` when the package runs from its source tree, where
   ``make setup`` fetches every set with Maven from ``engine/deps/pom.xml``;
3. otherwise the user's cache, ``$XDG_CACHE_HOME/streamwarden/jars/<set>-<digest>/``
   (``~/.cache`` without the variable), one folder per exact content of the set.

In the user's cache a missing set is fetched on first need, as Spark fetches
``spark.jars.packages`` into its own cache, and one log line says so; the folders of 1 and 2 are
never written unasked. ``streamwarden jars --fetch [SET ...]`` fetches ahead into whichever
folder is in effect. The jars come from Maven Central, or from the repository that
``$DEFAULT_ARTIFACT_REPOSITORY`` names (Spark's own variable for its package resolution).

The environment variables named here are read here and nowhere else.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from streamwarden.errors import ConfigError
from streamwarden.spark.maven import (
    MAVEN_CENTRAL,
    STAMP,
    MavenJar,
    fetch_jars,
    locked_sets,
    set_digest,
)

__all__ = [
    "JARS_DIR_VARIABLE",
    "REPOSITORY_VARIABLE",
    "fetch_jar_set",
    "jar_set",
    "jars_dir",
    "maven_repository",
    "set_folder",
    "shipped_sets",
]

#: The environment variable naming the folder that holds the jar sets' folders.
JARS_DIR_VARIABLE = "STREAMWARDEN_JARS_DIR"
#: Spark's variable for the repository its package resolution uses instead of Maven Central.
REPOSITORY_VARIABLE = "DEFAULT_ARTIFACT_REPOSITORY"

#: ``src/streamwarden/spark/jar_sets.py`` -> the repository, when the package runs from it.
_REPO = Path(__file__).resolve().parents[3]
_POM = _REPO / "engine" / "deps" / "pom.xml"

log = logging.getLogger("streamwarden.jars")


def _in_source_tree() -> bool:
    return _POM.is_file()


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "streamwarden" / "jars"


def _override() -> Path | None:
    """The folder of the sets' folders when one is given (variable) or implied (source tree)."""
    configured = os.environ.get(JARS_DIR_VARIABLE, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return _REPO / ".cache" / "jars" if _in_source_tree() else None


def jars_dir() -> Path:
    """The folder holding one folder per jar set: ``$STREAMWARDEN_JARS_DIR`` if set, else the
    source tree's ``.cache/jars``, else the user's cache."""
    return _override() or _user_cache()


def maven_repository() -> str:
    """Where missing sets are fetched from: ``$DEFAULT_ARTIFACT_REPOSITORY``, else Maven
    Central (both as Spark chooses for ``spark.jars.packages``)."""
    return os.environ.get(REPOSITORY_VARIABLE, "").strip() or MAVEN_CENTRAL


def shipped_sets() -> tuple[str, ...]:
    """The names of the sets whose exact artifacts ship with the package."""
    return tuple(locked_sets())


def _locked(name: str) -> tuple[MavenJar, ...]:
    jars = locked_sets().get(name)
    if jars is None:
        known = ", ".join(repr(s) for s in shipped_sets())
        raise ConfigError(f"no jar set {name!r}; the sets are {known}")
    return jars


def set_folder(name: str) -> Path:
    """The folder the set ``name`` is read from (see the module's docstring)."""
    override = _override()
    if override is not None:
        return override / name
    return _user_cache() / f"{name}-{set_digest(_locked(name))}"


def _jars_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jar")) if (folder / STAMP).is_file() else []


def jar_set(name: str) -> tuple[str, ...]:
    """Absolute paths of the jars of the set ``name``, sorted (so a classpath built from them
    is stable). In the user's cache a missing set is fetched first (one log line).

    Raises :class:`ConfigError` naming the folder and the command that fetches the set when it
    is missing, or only in part, from a folder given by ``$STREAMWARDEN_JARS_DIR`` or the source
    tree; the errors of :func:`fetch_jar_set` when a fetch fails.
    """
    folder = set_folder(name)
    jars = _jars_in(folder)
    if not jars and _override() is None:
        log.warning(
            "the %r jars are not in the cache yet: fetching them from %s into %s, once "
            "('streamwarden jars --fetch' fetches ahead)",
            name,
            maven_repository(),
            folder,
        )
        fetch_jar_set(name)
        jars = _jars_in(folder)
    if not jars:
        raise ConfigError(_missing_message(name, folder))
    return tuple(str(jar) for jar in jars)


def _missing_message(name: str, folder: Path) -> str:
    message = (
        f"the {name!r} jars are missing or incomplete in {str(folder)!r}; fetch them with "
        f"'streamwarden jars --fetch {name}'"
    )
    if os.environ.get(JARS_DIR_VARIABLE, "").strip():
        then = (
            "'make setup' fetches every set into the source tree"
            if _in_source_tree()
            else "a missing set is fetched into the user's cache on first need"
        )
        return f"{message}, or unset {JARS_DIR_VARIABLE} (then {then})"
    return f"{message} or 'make setup'" if _in_source_tree() else message


def fetch_jar_set(
    name: str, *, progress: Callable[[MavenJar], None] = lambda jar: None
) -> tuple[Path, bool]:
    """Fetches the set ``name`` into its folder (:func:`set_folder`) unless it is there
    complete already. Returns the folder and whether it fetched.

    Raises :class:`ConfigError` for an unknown set or a jar that fails its checksums,
    :class:`~streamwarden.errors.UnreachableError` when the repository does not answer.
    """
    jars = _locked(name)
    folder = set_folder(name)
    if _jars_in(folder):
        return folder, False
    fetch_jars(jars, folder, maven_repository(), progress=progress)
    return folder, True
