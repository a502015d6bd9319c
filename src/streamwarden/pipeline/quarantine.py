"""Records a failing batch's bisection set aside: kept in the checkpoint, applied to every
later attempt before validation.

A batch that fails the same way again and again because of a few of its records (a failure no
narrower catch could pin on them: the engine's own catch sets aside only what it sees throw) is
bisected by the supervisor (:mod:`streamwarden.pipeline.bisect`). The records found are listed
here by the SHA-256 of their exact bytes, with the batch and the failure; from then on, every
record with those bytes becomes a ``poison`` dead letter at validation, in the replay of the
failed batch and in any later one (the same bytes fail the same way).

The list is ``<checkpoint>/streamwarden/poison.json``, written atomically, and only grows. It is
applied before Spark plans anything of the replayed batch: the failed batch committed nothing
(its stateful step failed before any sink got a row) and Spark replays exactly the same input,
so each of its records ends in exactly one place: an output, or a ``poison`` dead letter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.atomic import write_atomically
from streamwarden.validation.validate import QUARANTINED

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["PoisonList", "QuarantinedRecord", "mark_quarantined", "record_digest"]


@dataclass(frozen=True)
class QuarantinedRecord:
    """A record set aside: the SHA-256 (hex) of its bytes, the batch that failed on it and the
    failure (``ErrorClass: message``)."""

    digest: str
    batch: int
    cause: str

    def detail(self) -> str:
        """The dead letter's detail: what failed, and why the record was set aside."""
        return (
            f"batch {self.batch} failed on this record again and again: {self.cause}; the "
            "supervisor's bisection set it aside here and the pipeline went on"
        )


class PoisonList:
    """The records quarantined by bisection for one checkpoint."""

    def __init__(self, checkpoint: Path) -> None:
        self.path = checkpoint / "streamwarden" / "poison.json"

    def records(self) -> list[QuarantinedRecord]:
        if not self.path.is_file():
            return []
        data = json.loads(self.path.read_text(encoding="utf-8"))
        return [QuarantinedRecord(**r) for r in data["records"]]

    def add(self, records: Iterable[QuarantinedRecord]) -> list[QuarantinedRecord]:
        """Adds ``records`` (those not listed yet); returns the whole list."""
        current = self.records()
        known = {r.digest for r in current}
        current += [r for r in records if r.digest not in known]
        text = json.dumps({"records": [asdict(r) for r in current]}, indent=1)
        write_atomically(self.path, text + "\n")
        return current


def record_digest(raw: Column) -> Column:
    """The SHA-256 (hex) of a record's exact bytes, as :class:`QuarantinedRecord` keeps it."""
    from pyspark.sql import functions as F

    return F.sha2(raw.cast("binary"), 256)


def mark_quarantined(records: DataFrame, quarantined: Iterable[QuarantinedRecord]) -> DataFrame:
    """Adds the :data:`~streamwarden.validation.validate.QUARANTINED` column to a source's
    records: the ``poison`` detail of a listed record, null for every other one."""
    from pyspark.sql import functions as F

    listed = list(quarantined)
    if not listed:
        return records.withColumn(QUARANTINED, F.lit(None).cast("string"))
    details = F.create_map(*[F.lit(x) for r in listed for x in (r.digest, r.detail())])
    return records.withColumn(QUARANTINED, details[record_digest(F.col("raw"))])
