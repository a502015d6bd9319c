"""The windows of ``examples/merchant_windows.toml`` worked out from the generated payments
without Spark: what the demo and the tests compare the pipeline's output with.

The pipeline reads one landing file per micro-batch. A batch runs under the watermark of the
batches before it (their latest event time less ``max_out_of_orderness``); a payment whose
window has ended more than ``allowed_lateness`` before that watermark is ``too_late``, every
other one is counted in its window (tumbling windows of ``size``, aligned to the epoch, per
merchant).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from streamwarden.local.examples.payments import Payment

__all__ = ["MerchantWindow", "expected_windows", "payments_by_file"]


@dataclass(frozen=True)
class MerchantWindow:
    """One merchant's window ``[start_ms, start_ms + size)`` and its aggregates."""

    merchant: str
    start_ms: int
    payments: int
    total: float
    accounts: int


def payments_by_file(files: Sequence[Path], payments: Sequence[Payment]) -> list[list[Payment]]:
    """The valid payments of each of ``files`` in the order they were written; ``payments``
    are the valid ones among their records (the others are dead letters of validation)."""
    valid = {_key(p.record()): p for p in payments}
    out = []
    for path in files:
        batch = []
        for line in path.read_bytes().splitlines():
            try:
                key = _key(json.loads(line))
            except ValueError:
                continue
            if key in valid:
                batch.append(valid[key])
        out.append(batch)
    return out


def expected_windows(
    batches: Sequence[Sequence[Payment]],
    *,
    size: timedelta,
    allowed_lateness: timedelta,
    max_out_of_orderness: timedelta,
) -> tuple[list[MerchantWindow], list[Payment]]:
    """The final windows, and the too-late payments, of ``batches`` read in order (one per
    micro-batch: :func:`payments_by_file`)."""
    size_ms, lateness_ms, delay_ms = (
        _ms(d) for d in (size, allowed_lateness, max_out_of_orderness)
    )
    latest: int | None = None
    kept: dict[tuple[str, int], list[Payment]] = defaultdict(list)
    too_late: list[Payment] = []
    for batch in batches:
        watermark = None if latest is None else latest - delay_ms
        for p in batch:
            start = p.at_ms - p.at_ms % size_ms
            if watermark is not None and start + size_ms + lateness_ms <= watermark:
                too_late.append(p)
            else:
                kept[(p.merchant, start)].append(p)
        if batch:
            top = max(p.at_ms for p in batch)
            latest = top if latest is None else max(latest, top)
    windows = [
        MerchantWindow(
            merchant,
            start,
            len(ps),
            sum(p.amount for p in ps),
            len({p.account for p in ps}),
        )
        for (merchant, start), ps in sorted(kept.items())
    ]
    return windows, too_late


def _ms(duration: timedelta) -> int:
    return duration // timedelta(milliseconds=1)


def _key(record: object) -> str:
    return json.dumps(record, sort_keys=True)
