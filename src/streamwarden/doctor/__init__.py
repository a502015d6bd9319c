"""``doctor``: finds contradictions and missing deadlines in a pipeline's settings before it runs.

``findings`` is the vocabulary (a finding has a severity, what is wrong, and a plain fix);
``memory`` derives what the task process will ask for; ``checks`` runs every config check;
``checkpoint`` holds the checks of an existing checkpoint (pinned partitions, log files
Spark would trip over at restart);
``plan`` checks a streaming query's plan for stateful steps without a watermark.
``installation`` checks what a pipeline starts on (the class archive of Spark's JVM).
"""

from streamwarden.doctor.checks import diagnose
from streamwarden.doctor.findings import Finding, Severity, render_findings

__all__ = ["Finding", "Severity", "diagnose", "render_findings"]
