"""The alerts of ``examples/payment_alerts.toml`` (``examples/alerts.py``'s
``BigPaymentAlert``) worked out from the generated payments without Spark: what the demo and
the tests compare the pipeline's output with.

The pipeline reads one landing file per micro-batch. A batch's payments behind the watermark
(the latest event time of the batches before, less ``max_out_of_orderness``) are ``too_late``;
the others go to the processor per account in event-time order. An amount is visible to a
payment at most a day after it; an alert is a payment over ten times the mean of the five
visible amounts; a sixth visible amount pushes the oldest out.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from streamwarden.local.examples.payments import Payment

__all__ = ["Alert", "expected_alerts"]

DAY_MS = 24 * 3600 * 1000
LAST = 5


@dataclass(frozen=True)
class Alert:
    account: str
    at_ms: int
    amount: float
    mean_before: float


def expected_alerts(
    files: Sequence[Path], payments: Sequence[Payment], max_out_of_orderness: timedelta
) -> tuple[list[Alert], list[Payment]]:
    """The alerts, and the payments that are too late, of ``files`` read in order, one batch
    each; ``payments`` are the valid ones among their records (the others are dead letters of
    validation)."""
    valid = {json.dumps(p.record(), sort_keys=True): p for p in payments}
    delay = max_out_of_orderness // timedelta(milliseconds=1)
    watermark = 0
    held: dict[str, list[tuple[int, float]]] = defaultdict(list)
    alerts: list[Alert] = []
    too_late: list[Payment] = []
    for path in files:
        batch = [valid[k] for k in _keys(path) if k in valid]
        by_account: dict[str, list[Payment]] = defaultdict(list)
        for p in batch:
            (too_late if p.at_ms < watermark else by_account[p.account]).append(p)
        for account, events in by_account.items():
            for p in sorted(events, key=lambda e: e.at_ms):
                visible = [(t, a) for t, a in held[account] if p.at_ms <= t + DAY_MS]
                amounts = [a for _, a in visible]
                if len(amounts) == LAST and p.amount > 10 * (sum(amounts) / LAST):
                    alerts.append(Alert(account, p.at_ms, p.amount, sum(amounts) / LAST))
                if len(visible) >= LAST:
                    oldest = min(visible, key=lambda e: e[0])
                    held[account].remove(oldest)
                held[account].append((p.at_ms, p.amount))
        if batch:
            watermark = max(watermark, max(p.at_ms for p in batch) - delay)
    return alerts, too_late


def _keys(path: Path) -> list[str]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        out.append(json.dumps(record, sort_keys=True))
    return out
