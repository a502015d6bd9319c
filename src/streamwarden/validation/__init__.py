"""Validation before state: parse, type, range and size checks with stable reason codes."""

from streamwarden.validation.reasons import Reason
from streamwarden.validation.validate import (
    QUARANTINED,
    TICK_FIELD,
    TICK_SOURCE,
    VALIDATED_COLUMNS,
    validate_records,
)

__all__ = [
    "QUARANTINED",
    "TICK_FIELD",
    "TICK_SOURCE",
    "VALIDATED_COLUMNS",
    "Reason",
    "validate_records",
]
