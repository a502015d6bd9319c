"""Running-query observability (lessons L9, L11, L13, L14, L15).

:class:`QueryMonitor` watches one query through a ``StreamingQueryListener`` and records per
batch its input, timings, watermark, state per operator and partition, dead letters and
checkpoint bytes; it exports them to Prometheus and to a JSON-lines progress log next to the
checkpoint, and raises the leak, skew and slow-batch alarms. ``streamwarden report`` charts a
progress log; ``streamwarden status`` shows what a running pipeline is doing.
"""

from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.leak_alarm import LeakAlarm
from streamwarden.monitoring.monitor import QueryMonitor
from streamwarden.monitoring.progress_log import BatchRecord, progress_dir, read_progress_log
from streamwarden.monitoring.skew import PartitionLoad, SkewDetector
from streamwarden.monitoring.summary import BatchSummary, OperatorSummary

__all__ = [
    "BatchRecord",
    "BatchSummary",
    "Finding",
    "LeakAlarm",
    "OperatorSummary",
    "PartitionLoad",
    "QueryMonitor",
    "SkewDetector",
    "progress_dir",
    "read_progress_log",
]
