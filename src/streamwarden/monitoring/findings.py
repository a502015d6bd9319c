"""What the monitoring alarms report: one finding per alarm and batch."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Finding", "FindingKind"]

FindingKind = Literal[
    "state_growth", "skew", "slow_batch", "state_rows_untracked", "offsets_skipped"
]


@dataclass(frozen=True)
class Finding:
    """An alarm raised at a batch: its kind, the operator if any, a sentence to act on."""

    kind: FindingKind
    batch_id: int
    message: str
    operator: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(**data)
