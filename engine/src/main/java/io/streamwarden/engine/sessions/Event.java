package io.streamwarden.engine.sessions;

/** One validated pageview, as the engine sees it. */
public final class Event {
  public final long tsMs;
  public final long page;
  public final String url;
  public final long size;
  public final String raw;

  public Event(long tsMs, long page, String url, long size, String raw) {
    this.tsMs = tsMs;
    this.page = page;
    this.url = url;
    this.size = size;
    this.raw = raw;
  }
}
