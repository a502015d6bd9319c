"""Checks of the Spark settings a config passes through (``[spark]`` ``master`` and
``[spark.conf]``), at load time: a bad value there otherwise surfaces as a Java stack trace when
the JVM starts, or as a crash of ``streamwarden doctor`` reading it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from streamwarden.settings.units import parse_memory

__all__ = ["check_conf", "check_master", "local_threads"]

_MASTER = re.compile(
    r"^(local(\[(?P<threads>\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]"
    r"|spark://.+|k8s://.+|yarn)$"
)
_ROCKSDB = "spark.sql.streaming.stateStore.rocksdb."


def local_threads(master: str) -> str | None:
    """The task threads of a ``local`` master: ``"N"``, ``"*"``, ``"1"`` for plain ``local``;
    None for a cluster master."""
    match = _MASTER.match(master.replace(" ", ""))
    if match is None:
        return None
    if match.group("threads"):
        return match.group("threads")
    return "1" if match.group(0) == "local" else None


def check_master(master: str) -> str:
    """``master`` if Spark can start with it, else ValueError saying what the forms are."""
    match = _MASTER.match(master.replace(" ", ""))
    if match is None:
        raise ValueError(
            f"spark.master {master!r} is not a Spark master: use local, local[N], local[*], "
            "spark://HOST:PORT, k8s://URL or yarn"
        )
    if match.group("threads") == "0":
        raise ValueError(f"spark.master {master!r} runs no task threads: use local[N] with N >= 1")
    return master


def _memory(value: str) -> None:
    parse_memory(value, bare_unit="m")


def _whole_number(value: str) -> None:
    if not value.strip().isdigit():
        raise ValueError(f"expected a whole number, got {value!r}")


def _boolean(value: str) -> None:
    if value.strip().lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")


#: Settings whose values streamwarden reads itself (``doctor``), with the form each must have.
_FORMS: Mapping[str, Callable[[str], None]] = {
    "spark.driver.memory": _memory,
    "spark.executor.memory": _memory,
    "spark.driver.memoryOverhead": _memory,
    "spark.executor.memoryOverhead": _memory,
    "spark.executor.pyspark.memory": _memory,
    "spark.memory.offHeap.size": _memory,
    "spark.memory.offHeap.enabled": _boolean,
    f"{_ROCKSDB}boundedMemoryUsage": _boolean,
    f"{_ROCKSDB}maxMemoryUsageMB": _whole_number,
    "spark.sql.shuffle.partitions": _whole_number,
}


def check_conf(conf: Mapping[str, str]) -> Mapping[str, str]:
    """``conf`` if every setting streamwarden reads has a value of the right form."""
    for key, value in conf.items():
        form = _FORMS.get(key)
        if form is None:
            continue
        try:
            form(value)
        except ValueError as exc:
            raise ValueError(f"spark.conf {key!r} = {value!r}: {exc}") from None
    return conf
