"""The state-growth (leak) alarm: state that keeps growing while the input stays steady (L1, L15).

The rule, per stateful operator, over the last ``window`` batches that had input:

1. a least-squares line through state rows (against the batch index) rises by at least
   ``growth_threshold`` of the mean state over the window, and the line fits (R² ≥ 0.8);
2. state grew in at least three quarters of the batch-to-batch steps ("keeps growing", not a
   warm-up step followed by a plateau);
3. the input is steady: input rows per batch, and keys written per batch (``numRowsUpdated``,
   the key rate), each change along their fitted line by less than ``input_steady_tolerance``
   of their mean over the window;
4. almost nothing leaves the state: rows removed (``numRowsRemoved`` plus values removed by
   TTL expiry) are under ``MAX_REMOVAL_RATIO`` of the rows written.

Rules 3 and 4 keep a bounded operator quiet while its key population ramps up (measured on this
project's sessions: a 4-hour warm-up grows state by 35% with steady input rows, but its key rate
grows too and it removes ~37% as many rows as it writes; a state with no deadline removes none).
A partial leak, where some keys have a deadline and others do not, is not caught by rule 4;
``streamwarden inspect`` lists keys that hold state with no timer.

Time is the batch index, not event time: the leaking queries this looks for often have no event
time at all (a ``groupBy`` without a watermark), a catch-up run packs hours of event time into
one batch, and "state grows per unit of steady work" is exactly what a leak is. The finding
reports rows written vs removed and expired timers, so the reader sees what leaves the state.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from dataclasses import dataclass
from statistics import mean

from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.summary import BatchSummary

__all__ = ["LeakAlarm", "LinearFit", "fit_line"]

MIN_R_SQUARED = 0.8
MIN_GROWING_STEPS = 0.75
MAX_REMOVAL_RATIO = 0.1


@dataclass(frozen=True)
class LinearFit:
    slope: float
    r_squared: float


def fit_line(values: list[float]) -> LinearFit:
    """Least-squares fit of ``values`` against 0, 1, 2, ...; R² is 1.0 for a flat series."""
    xs = range(len(values))
    x_mean, y_mean = mean(xs), mean(values)
    sxx = sum((x - x_mean) ** 2 for x in xs)
    sxy = sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, values, strict=True))
    syy = sum((y - y_mean) ** 2 for y in values)
    slope = sxy / sxx if sxx else 0.0
    r_squared = 1.0 if syy == 0 else (sxy * sxy) / (sxx * syy)
    return LinearFit(slope, r_squared)


@dataclass(frozen=True)
class _Point:
    batch_id: int
    input_rows: int
    state_rows: int
    updated: int
    removed: int
    expired_timers: int


class LeakAlarm:
    """Feed it every batch in order; it returns the findings of the batch (usually none)."""

    def __init__(
        self, window: int = 8, growth_threshold: float = 0.2, input_steady_tolerance: float = 0.25
    ) -> None:
        self.window = window
        self.growth_threshold = growth_threshold
        self.input_steady_tolerance = input_steady_tolerance
        self._points: dict[str, deque[_Point]] = defaultdict(lambda: deque(maxlen=window))

    def observe(self, batch: BatchSummary) -> list[Finding]:
        if batch.input_rows == 0:
            return []  # no-data batches only fire timers; the trend is judged on work
        findings = []
        for op in batch.operators:
            points = self._points[op.label]
            point = _Point(
                batch.batch_id,
                batch.input_rows,
                op.rows_total,
                op.rows_updated,
                op.removals,
                op.custom_metrics.get("numExpiredTimers", 0),
            )
            points.append(point)
            if len(points) == self.window and (finding := self._judge(op.label, list(points))):
                findings.append(finding)
        return findings

    def _judge(self, operator: str, points: list[_Point]) -> Finding | None:
        state = [float(p.state_rows) for p in points]
        inputs = [float(p.input_rows) for p in points]
        keys = [float(p.updated) for p in points]
        state_fit = fit_line(state)
        growth = _change(state_fit, state)
        input_change = _change(fit_line(inputs), inputs)
        key_change = _change(fit_line(keys), keys)
        growing_steps = sum(b > a for a, b in itertools.pairwise(state)) / (len(points) - 1)
        updated = sum(p.updated for p in points)
        removed = sum(p.removed for p in points)
        if (
            growth < self.growth_threshold
            or state_fit.r_squared < MIN_R_SQUARED
            or growing_steps < MIN_GROWING_STEPS
            or abs(input_change) >= self.input_steady_tolerance
            or abs(key_change) >= self.input_steady_tolerance
            or removed >= MAX_REMOVAL_RATIO * updated
        ):
            return None
        first, last = points[0], points[-1]
        return Finding(
            kind="state_growth",
            batch_id=last.batch_id,
            operator=operator,
            message=(
                f"state of operator {operator} grew from {first.state_rows:,} to "
                f"{last.state_rows:,} rows over batches {first.batch_id}-{last.batch_id} "
                f"(+{state_fit.slope:,.0f} rows/batch, {growth:.0%} of its mean) while input "
                f"({input_change:+.0%}) and keys written per batch ({key_change:+.0%}) stayed "
                f"steady; {updated:,} rows written, {removed:,} removed: check that every key "
                "has a deadline (watermark, TTL or timer)"
            ),
            details={
                "slope_rows_per_batch": round(state_fit.slope, 1),
                "growth": round(growth, 3),
                "r_squared": round(state_fit.r_squared, 3),
                "input_change": round(input_change, 3),
                "key_rate_change": round(key_change, 3),
                "expired_timers": sum(p.expired_timers for p in points),
                "rows_updated": updated,
                "rows_removed": removed,
            },
        )


def _change(fit: LinearFit, values: list[float]) -> float:
    """How much the fitted line moves over the window, relative to the mean."""
    return fit.slope * (len(values) - 1) / max(mean(values), 1.0)
