"""Validation's settings: the names of the record fields it reads (``[fields]``) and the checks
it runs on every record before any state is touched (``[validation]``)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from streamwarden.settings import defaults
from streamwarden.settings.types import OptionalDuration, Size, Strict

__all__ = ["FieldNames", "ValidationConfig"]


class FieldNames(Strict):
    """Names of the pageview fields in the input records."""

    user_id: str = "user_id"
    ts: str = "ts"
    page_number: str = "page_number"
    url: str = "url"


class ValidationConfig(Strict):
    """Checks run on every record before any state is touched (lesson L4)."""

    max_pages: int = Field(default=defaults.MAX_PAGES, ge=1)
    max_record_bytes: Size = Field(default=64 * 1024, ge=16)
    max_user_id_length: int = Field(default=256, ge=1)
    max_future_skew: OptionalDuration = timedelta(hours=1)
