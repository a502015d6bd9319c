"""``streamwarden report``: one picture of a progress log, to see at a glance whether state is
flat (L15). Four panels against the batch id: input rows per batch, batch duration, state rows
per operator, checkpoint bytes, and a fifth for a Kafka source: records behind the latest offset
per topic partition (consumer lag); alarm findings are marked where they were raised.

The input panel plots rows per batch, not Spark's ``inputRowsPerSecond``: that rate is measured
between triggers, and a ``run --once`` (an availableNow query) reports 0 for every batch, which
drew a flat line however much came in. Rows per batch is the same quantity the leak alarm weighs
against state rows, and reads the same for a one-off run and a continuous one. (It is Spark's
``numInputRows``: the one row of an idle or drain tick is counted.)

Writes a PNG and a self-contained HTML page (the chart as inline SVG, with text kept as text,
and a table of the findings).
"""

from __future__ import annotations

import html
import io
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.atomic import write_atomically
from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.progress_log import BatchRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ReportData", "build_report_data", "draw_chart", "render_report"]

Series = dict[str, list[tuple[int, float]]]

#: Panel titles and the y-axis label of each.
PANELS = {
    "input": "input rows per batch",
    "duration": "batch duration (s)",
    "state": "state rows",
    "checkpoint": "checkpoint bytes",
    "lag": "source lag (records)",
}
#: Panels drawn only when a series has points: a file source has no lag.
_OPTIONAL_PANELS = frozenset({"lag"})
_COLOURS = {
    "state_growth": "tab:red",
    "skew": "tab:purple",
    "slow_batch": "tab:orange",
    "state_rows_untracked": "tab:gray",
    "offsets_skipped": "tab:brown",
}


@dataclass
class ReportData:
    """What the chart plots: per panel, named series of (batch id, value); and the findings."""

    query: str
    panels: dict[str, Series] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def build_report_data(records: list[BatchRecord]) -> ReportData:
    """The series of the chart, one point per batch record, and every finding raised."""
    data = ReportData(query=records[0].summary.query if records else "?")
    panels: dict[str, Series] = {name: defaultdict(list) for name in PANELS}
    for r in records:
        s, b = r.summary, r.summary.batch_id
        panels["input"]["input rows per batch"].append((b, float(s.input_rows)))
        panels["duration"]["batch duration"].append((b, s.batch_duration_ms / 1000))
        for op in s.operators:
            panels["state"][f"state rows {op.label}"].append((b, float(op.rows_total)))
        if r.checkpoint is not None:
            c = r.checkpoint
            panels["checkpoint"]["state bytes written"].append((b, float(c.state_bytes_written)))
            panels["checkpoint"]["metadata bytes"].append((b, float(c.metadata_bytes_total)))
        for where, lag in sorted(s.source_lag.items()):
            panels["lag"][f"lag {where}"].append((b, float(lag)))
        data.findings.extend(r.findings)
    data.panels = {name: dict(series) for name, series in panels.items()}
    return data


def render_report(records: list[BatchRecord], png: Path, html_path: Path) -> ReportData:
    """Draws the chart into ``png`` and ``html_path``; returns what was plotted."""
    data = build_report_data(records)
    fig = draw_chart(data, len(records))  # selects the Agg backend before pyplot is imported
    import matplotlib.pyplot as plt

    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    svg = io.StringIO()
    fig.savefig(svg, format="svg")
    plt.close(fig)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(html_path, _page(data, svg.getvalue()))
    return data


def draw_chart(data: ReportData, batches: int) -> Figure:
    """The chart of ``data``: one panel per entry of :data:`PANELS`, sharing a batch axis
    whose ticks are whole numbers (batch ids; a few batches would get 0.2, 0.4 ... otherwise).
    The caller closes the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    plt.rcParams["svg.fonttype"] = "none"  # keep labels as text in the SVG
    shown = {n: y for n, y in PANELS.items() if n not in _OPTIONAL_PANELS or data.panels.get(n)}
    fig, axes = plt.subplots(len(shown), 1, figsize=(10, 2.25 * len(shown)), sharex=True)
    for ax, (name, ylabel) in zip(axes, shown.items(), strict=True):
        for label, points in data.panels[name].items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=label)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if data.panels[name]:
            ax.legend(loc="upper left", fontsize="small")
    _mark_findings(axes, data.findings)
    axes[-1].set_xlabel("batch")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(f"streamwarden report: {data.query} ({batches} batches)")
    fig.tight_layout()
    return fig


def _mark_findings(axes: object, findings: list[Finding]) -> None:
    """A vertical line at the first batch of each alarm run, labelled once per kind."""
    labelled: set[str] = set()
    previous: dict[tuple[str, str | None], int] = {}
    for f in findings:
        key = (f.kind, f.operator)
        if previous.get(key) == f.batch_id - 1:
            previous[key] = f.batch_id
            continue
        previous[key] = f.batch_id
        label = None if f.kind in labelled else f"alarm: {f.kind}"
        labelled.add(f.kind)
        for ax in axes:  # type: ignore[attr-defined]
            ax.axvline(f.batch_id, color=_COLOURS[f.kind], linestyle="--", alpha=0.7, label=label)
            label = None
    if labelled:
        axes[0].legend(loc="upper left", fontsize="small")  # type: ignore[index]


def _page(data: ReportData, svg: str) -> str:
    rows = "".join(
        f"<tr><td>{f.batch_id}</td><td>{html.escape(f.kind)}</td>"
        f"<td>{html.escape(f.operator or '')}</td><td>{html.escape(f.message)}</td></tr>"
        for f in data.findings
    )
    findings = (
        f"<table><tr><th>batch</th><th>alarm</th><th>operator</th><th>finding</th></tr>{rows}"
        "</table>"
        if rows
        else "<p>No alarm was raised.</p>"
    )
    svg_body = svg[svg.index("<svg") :]
    title = html.escape(f"streamwarden report: {data.query}")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px;text-align:left}</style></head><body>"
        f"<h1>{title}</h1>{svg_body}<h2>Findings</h2>{findings}</body></html>"
    )
