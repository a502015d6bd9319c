"""Stable reason codes carried by every dead letter. Never rename one: users alert on them."""

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
    INVALID_USER_ID = "invalid_user_id"
    INVALID_TIMESTAMP = "invalid_timestamp"
    TIMESTAMP_IN_FUTURE = "timestamp_in_future"
    PAGE_NUMBER_OUT_OF_RANGE = "page_number_out_of_range"
    PAGE_NUMBER_OVER_MAX = "page_number_over_max"
    # Decided by the stateful engine, after validation:
    TOO_LATE = "too_late"
    SESSION_PAGE_CAP = "session_page_cap"
    SESSION_BYTE_CAP = "session_byte_cap"
    KEY_BUFFER_FULL = "key_buffer_full"
    #: A record the engine threw on, set aside so that no record can fail a batch.
    POISON = "poison"
    # Decided when the pattern engine's input is built:
    INVALID_KEY = "invalid_key"
