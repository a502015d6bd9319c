"""Validation before state: records read into the declared schema, with type, range, size and
rule checks, each rejected record given a stable reason code."""

from streamwarden.validation.reasons import Reason
from streamwarden.validation.validate import (
    CONTROL_COLUMNS,
    DETAIL,
    IS_TICK,
    KEY,
    QUARANTINED,
    RAW,
    REASON,
    SIZE,
    TICK_FIELD,
    TICK_SOURCE,
    TS_MS,
    validate_records,
)

__all__ = [
    "CONTROL_COLUMNS",
    "DETAIL",
    "IS_TICK",
    "KEY",
    "QUARANTINED",
    "RAW",
    "REASON",
    "SIZE",
    "TICK_FIELD",
    "TICK_SOURCE",
    "TS_MS",
    "Reason",
    "validate_records",
]
