"""Keyed processors the tests run, over pageviews (``tests.support.PAGEVIEW_SCHEMA``)."""

from __future__ import annotations

from datetime import timedelta

from streamwarden import KeyedProcessor, ValueState


class PageCounter(KeyedProcessor):
    """Each user's running count of pages, forgotten 30 minutes after the user's last page."""

    output = "user_id STRING, ts BIGINT, pages BIGINT"
    count = ValueState("pages BIGINT", expire_after=timedelta(minutes=30))

    def process(self, key, events, ctx):
        for e in events:
            pages = (self.count.get() or 0) + 1
            self.count.set(pages)
            ctx.emit(user_id=key, ts=e.ts, pages=pages)


class RenamedCounter(KeyedProcessor):
    """``PageCounter`` with its state renamed: another layout on a checkpoint."""

    output = "user_id STRING, ts BIGINT, pages BIGINT"
    pages = ValueState("pages BIGINT", expire_after=timedelta(minutes=30))

    def process(self, key, events, ctx):
        for e in events:
            ctx.emit(user_id=key, ts=e.ts, pages=1)


class RaisesOnBad(PageCounter):
    """``PageCounter``, raising on the user named ``bad``."""

    def process(self, key, events, ctx):
        if key == "bad":
            raise RuntimeError("bad user")
        super().process(key, events, ctx)


class KeptForever(KeyedProcessor):
    """A running count that says it has no deadline."""

    output = "user_id STRING, pages BIGINT"
    count = ValueState("pages BIGINT", unbounded=True)

    def process(self, key, events, ctx):
        pages = (self.count.get() or 0) + len(events)
        self.count.set(pages)
        ctx.emit(user_id=key, pages=pages)
