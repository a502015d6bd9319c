"""Stable reason codes carried by every dead letter. Users alert on them: a code is renamed only
when what it names is gone (a CHANGELOG entry says what replaces it)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Reason"]


class Reason(StrEnum):
    """Why a record went to the dead-letter output instead of a session."""

    RECORD_TOO_LARGE = "record_too_large"
    INVALID_UTF8 = "invalid_utf8"
    MALFORMED_JSON = "malformed_json"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    INVALID_TIMESTAMP = "invalid_timestamp"
    TIMESTAMP_IN_FUTURE = "timestamp_in_future"
    #: The key is empty, only white space, holds NUL, or is over ``max_key_length``.
    INVALID_KEY = "invalid_key"
    # The schema's checks (``[schema.checks.<field>]``) and rules (``[[schema.rules]]``):
    OUT_OF_RANGE = "out_of_range"
    NOT_ALLOWED = "not_allowed"
    TOO_LONG = "too_long"
    PATTERN_MISMATCH = "pattern_mismatch"
    RULE_FAILED = "rule_failed"
    # Decided by the stateful engine, after validation:
    TOO_LATE = "too_late"
    SESSION_EVENT_CAP = "session_event_cap"
    SESSION_BYTE_CAP = "session_byte_cap"
    #: An event past a window's ``max_events`` (any of its windows, for hopping windows).
    WINDOW_EVENT_CAP = "window_event_cap"
    #: An event past a window's ``max_window_bytes`` (any of its windows).
    WINDOW_BYTE_CAP = "window_byte_cap"
    KEY_BUFFER_FULL = "key_buffer_full"
    #: A record the engine threw on, set aside so that no record can fail a batch.
    POISON = "poison"
    # Decided by a keyed processor's guard (``operator = "process"``):
    #: A write to a state at its ``max_items``/``max_bytes`` with ``when_full = "dead_letter"``.
    STATE_CAP = "state_cap"
    #: The processor's own code raised on the key's records of the batch.
    PROCESSOR_ERROR = "processor_error"
