"""Validation's settings (``[validation]``): the checks run on every record before any state is
touched, beside those the schema declares (``[schema]``), and how many rejects a run bears."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from streamwarden.settings.removed import refuse_removed
from streamwarden.settings.types import OptionalDuration, Size, Strict

__all__ = ["ValidationConfig"]

_REMOVED = {
    "max_pages": "the per-session cap is sessions.max_events, and a field's range is "
    "[schema.checks.<field>] min and max",
    "max_user_id_length": "write validation.max_key_length",
}


def _instant(value: object) -> object:
    """An ISO-8601 time with a zone (TOML's own date-times too), or "off"."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "off"):
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"{value!r} is not an ISO-8601 time such as 2000-01-01T00:00:00Z, nor 'off'"
            ) from None
    else:
        return value
    if parsed.tzinfo is None:
        raise ValueError(f"{value!r} has no zone; add one, e.g. Z for UTC")
    return parsed.astimezone(UTC)


class ValidationConfig(Strict):
    """Checks run on every record before any state is touched (lesson L4), and the share of
    rejects that stops a run.

    - ``max_record_bytes``: a bigger record is ``record_too_large``;
    - ``max_key_length``: a longer key (in characters) is ``invalid_key``;
    - ``max_future_skew``: an event time further ahead of the clock is ``timestamp_in_future``
      (``"off"``: no limit);
    - ``earliest_event_time``: an event time before it is ``invalid_timestamp``, its detail
      asking whether ``schema.time_unit`` is right (seconds read as milliseconds land in
      January 1970); ``"off"``: no limit;
    - ``max_dead_letter_share``: a run stops with exit code 1, naming the top reasons and a
      sample record, once more than this share of its records were dead letters, counted over
      at least ``dead_letter_share_min_records`` records (1.0: never).
    """

    max_record_bytes: Size = Field(default=64 * 1024, ge=16)
    max_key_length: int = Field(default=256, ge=1)
    max_future_skew: OptionalDuration = timedelta(hours=1)
    earliest_event_time: Annotated[datetime | None, BeforeValidator(_instant)] = datetime(
        2000, 1, 1, tzinfo=UTC
    )
    max_dead_letter_share: float = Field(default=0.5, gt=0, le=1)
    dead_letter_share_min_records: int = Field(default=100, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: object) -> object:
        return refuse_removed(data, _REMOVED, "validation")
