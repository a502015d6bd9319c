"""``SessionTester``: the session operator without a Spark cluster, in the spirit of ``TwsTester``.

It drives the very ``SessionProcessor`` the Spark operator runs (no copy of its rules or of its
state and timer handling) under an in-memory state handle, in a small JVM started through py4j,
with Spark's micro-batch order: each key's rows first, then the timers the watermark has passed.
Times are timezone-aware datetimes or epoch milliseconds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from streamwarden.errors import UsageError
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.spark.engine_jar import engine_jar_path
from streamwarden.testing.records import (
    SessionOutput,
    UserSessionState,
    session_record,
    session_state,
)
from streamwarden.testing.times import to_ms

__all__ = ["PageView", "SessionTester"]

_GATEWAY: Any = None


@dataclass(frozen=True)
class PageView:
    """One event for the tester: user, event time (aware datetime or epoch millis), and
    optional page, url and size."""

    user: str
    at: datetime | int
    page: int = 1
    url: str = "/"
    size: int = 50
    raw: str = field(default="")


class SessionTester:
    """Feeds micro-batches to the session logic and shows what it emits and keeps."""

    def __init__(self, params: SessionParams) -> None:
        if not isinstance(params, SessionParams):
            raise UsageError(
                "SessionTester(params): params must be a SessionParams such as "
                f"SessionParams(gap=timedelta(minutes=30)), got a {type(params).__name__}"
            )
        self.params = params
        self._harness = _gateway().jvm.io.streamwarden.engine.testing.SessionHarness(
            params.to_plan_json()
        )

    def run_batch(self, events: list[PageView], watermark: datetime | int) -> list[SessionOutput]:
        """One micro-batch whose watermark (for eviction) is ``watermark``: the session
        revisions and dead letters it emits, in the operator's order."""
        for e in events:
            if not isinstance(e, PageView):
                raise UsageError(
                    f"run_batch(events): each event must be a PageView such as "
                    f"PageView('u1', datetime(2026, 1, 1, tzinfo=UTC)), got {e!r}"
                )
        payload = json.dumps(
            [
                {
                    "key": e.user,
                    "ts_ms": to_ms(e.at),
                    "page": e.page,
                    "url": e.url,
                    "size": e.size,
                    "raw": e.raw or f"{e.user}@{to_ms(e.at)}",
                }
                for e in events
            ]
        )
        rows = json.loads(self._harness.runBatch(payload, to_ms(watermark)))
        return [session_record(row) for row in rows]

    def advance_watermark(self, watermark: datetime | int) -> list[SessionOutput]:
        """A micro-batch without input: only timers fire."""
        return self.run_batch([], watermark)

    def peek_state(self, user: str) -> UserSessionState | None:
        """The state one user holds, or None if it holds none."""
        text = self._harness.peek(user)
        return None if text is None else session_state(json.loads(text))

    @property
    def state_rows(self) -> int:
        """Number of users holding state (the operator's state rows in Spark)."""
        return int(self._harness.stateRows())


def _gateway() -> Any:
    """One JVM per Python process holding the engine jar and the pyspark wheel's jars: the
    harness runs the real ``SessionProcessor``, a Spark ``StatefulProcessor``."""
    global _GATEWAY
    if _GATEWAY is None:
        import pyspark
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
        classpath = os.pathsep.join([str(engine_jar_path()), jars])
        port = launch_gateway(classpath=classpath, die_on_exit=True, javaopts=["-Xmx512m"])
        _GATEWAY = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
    return _GATEWAY
