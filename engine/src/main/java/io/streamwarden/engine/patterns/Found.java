package io.streamwarden.engine.patterns;

/** What the NFA reports for a key: a match, a timed-out partial match, or dropped partials. */
public final class Found {
  public enum Kind { MATCH, TIMEOUT, OVERFLOW }

  public final Kind kind;
  public final Partial partial;
  public final long deadlineMs;
  public final long dropped;

  private Found(Kind kind, Partial partial, long deadlineMs, long dropped) {
    this.kind = kind;
    this.partial = partial;
    this.deadlineMs = deadlineMs;
    this.dropped = dropped;
  }

  public static Found match(Partial p) {
    return new Found(Kind.MATCH, p, Long.MIN_VALUE, 0);
  }

  public static Found timeout(Partial p, long deadlineMs) {
    return new Found(Kind.TIMEOUT, p, deadlineMs, 0);
  }

  public static Found overflow(long dropped) {
    return new Found(Kind.OVERFLOW, null, Long.MIN_VALUE, dropped);
  }
}
