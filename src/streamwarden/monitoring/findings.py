"""What the monitoring alarms report: one finding per alarm and batch."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["FAILURE_MODE", "Finding", "FindingKind"]

FindingKind = Literal[
    "state_growth",
    "skew",
    "slow_batch",
    "state_rows_untracked",
    "offsets_skipped",
    "sink_rows_duplicated",
]


#: The section of docs/failure-modes.md that explains each kind of alarm.
FAILURE_MODE: dict[str, str] = {
    "state_growth": "state-without-deadline",
    "skew": "skewed-partitions",
    "slow_batch": "slow-work-unexplained",
    "state_rows_untracked": "unwatched-trends",
    "offsets_skipped": "offsets-apart-from-state",
    "sink_rows_duplicated": "rows-written-by-others",
}


@dataclass(frozen=True)
class Finding:
    """An alarm raised at a batch: its kind, the operator if any, a sentence to act on."""

    kind: FindingKind
    batch_id: int
    message: str
    operator: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def see(self) -> str:
        """Where this kind of alarm is explained: ``docs/failure-modes.md#<anchor>``."""
        return f"docs/failure-modes.md#{FAILURE_MODE[self.kind]}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(**data)
