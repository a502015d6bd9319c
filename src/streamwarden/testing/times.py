"""Event times as the testers take them: timezone-aware datetimes or epoch milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamwarden.errors import UsageError

__all__ = ["to_ms"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_ms(moment: object) -> int:
    """Epoch milliseconds of ``moment``: an aware datetime, or an int of epoch milliseconds."""
    if isinstance(moment, int) and not isinstance(moment, bool):
        return moment
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            raise UsageError(
                f"times must be timezone-aware datetimes, got the naive {moment!r}; pass e.g. "
                "datetime(2026, 1, 1, tzinfo=UTC), or epoch milliseconds as an int"
            )
        return (moment - _EPOCH) // timedelta(milliseconds=1)
    raise UsageError(
        f"times must be timezone-aware datetimes or epoch milliseconds (an int), got "
        f"{moment!r} ({type(moment).__name__})"
    )
