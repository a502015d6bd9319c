package io.streamwarden.engine.sessions;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The compact summary of one session: its span, counts, identity and its aggregates' state,
 * never the raw events (only the values that {@code count_distinct} and {@code collect_*} need).
 *
 * <p>A Java bean so that Spark's bean encoder can store it in the state store, readable by the
 * state data source. {@code revision} is -1 until the session is first emitted; {@code sessionId}
 * is assigned at that moment and kept for every later revision.
 *
 * <p>{@code aggregates} is the encoded state of the accumulators ({@link AggregatePlan#encode}),
 * null when the plan has none. It is decoded when a session is touched (the live accumulators are
 * transient and have no getter, so they are not part of the bean) and encoded again, by {@link
 * #encodeIfChanged}, only when they changed: an untouched session costs no decoding.
 */
public final class SessionAgg implements Serializable {
  private static final long serialVersionUID = 2L;

  private long startMs;
  private long endMs;
  private long eventCount;
  private long bytes;
  private boolean truncated;
  private boolean closed;
  private String sessionId;
  private int revision = -1;
  private List<String> mergedIds;
  private byte[] aggregates;
  private transient Accumulator[] live;
  private transient boolean changed;

  public SessionAgg() {}

  /** A session of one event. */
  static SessionAgg of(Event e, AggregatePlan plan) {
    SessionAgg s = new SessionAgg();
    s.startMs = e.tsMs;
    s.endMs = e.tsMs;
    s.eventCount = 1;
    s.bytes = e.size;
    if (plan.size() > 0) {
      s.live = plan.newAccumulators();
      plan.add(s.live, e);
      s.changed = true;
    }
    return s;
  }

  /**
   * The summary of a window {@code [startMs, endMs)} holding one event: its span is the
   * window's (events inside it never move it, {@link #add}), not its events'.
   */
  public static SessionAgg window(long startMs, long endMs, Event e, AggregatePlan plan) {
    if (e.tsMs < startMs || e.tsMs >= endMs) {
      throw new IllegalArgumentException("event time " + e.tsMs + " is outside the window ["
          + startMs + ", " + endMs + ")");
    }
    SessionAgg s = of(e, plan);
    s.startMs = startMs;
    s.endMs = endMs;
    return s;
  }

  /** The live accumulators, decoded from {@code aggregates} when first needed; null if none. */
  Accumulator[] accumulators(AggregatePlan plan) {
    if (live == null && plan.size() > 0) {
      if (aggregates == null) {
        throw new IllegalStateException("session " + sessionId + " holds no aggregate state, "
            + "but the plan has " + plan.size() + " aggregates: it was kept under a plan "
            + "without them (a query's aggregates cannot change while it keeps its state; "
            + "start it from a new checkpoint)");
      }
      live = plan.decode(aggregates);
    }
    return live;
  }

  /** Adds an event that joins this session. */
  public void add(Event e, AggregatePlan plan) {
    startMs = Math.min(startMs, e.tsMs);
    endMs = Math.max(endMs, e.tsMs);
    eventCount++;
    bytes += e.size;
    if (plan.size() > 0) {
      plan.add(accumulators(plan), e);
      changed = true;
    }
  }

  /** Folds {@code other} into this session; both must belong to the same key. */
  void absorb(SessionAgg other, AggregatePlan plan) {
    startMs = Math.min(startMs, other.startMs);
    endMs = Math.max(endMs, other.endMs);
    eventCount += other.eventCount;
    bytes += other.bytes;
    truncated |= other.truncated;
    if (plan.size() > 0) {
      Accumulator[] mine = accumulators(plan);
      Accumulator[] theirs = other.accumulators(plan);
      for (int i = 0; i < mine.length; i++) {
        mine[i].merge(theirs[i]);
      }
      changed = true;
    }
    if (other.sessionId != null) {
      addMergedId(other.sessionId);
    }
    if (other.mergedIds != null) {
      for (String id : other.mergedIds) {
        addMergedId(id);
      }
    }
  }

  private void addMergedId(String id) {
    if (mergedIds == null) {
      mergedIds = new ArrayList<>();
    }
    mergedIds.add(id);
  }

  /** Bytes of the values the aggregates hold, toward {@code max_session_bytes}. */
  public long heldBytes(AggregatePlan plan) {
    return plan.holdsValues() ? AggregatePlan.heldBytes(accumulators(plan)) : 0;
  }

  /** How many bytes {@link #heldBytes} would grow by if {@code e} were added. */
  public long heldBytesAdding(Event e, AggregatePlan plan) {
    return plan.holdsValues() ? plan.heldBytesAdding(accumulators(plan), e) : 0;
  }

  /**
   * Bytes the aggregates would hold if {@code e} joined {@code touching}, merged into one
   * session; 0 when no aggregate holds values. A bridge of sessions is rare: its merge is tried
   * on fresh accumulators, the sessions themselves are not changed.
   */
  static long heldBytesJoining(List<SessionAgg> touching, Event e, AggregatePlan plan) {
    if (!plan.holdsValues()) {
      return 0;
    }
    if (touching.size() == 1) {
      SessionAgg s = touching.get(0);
      return s.heldBytes(plan) + s.heldBytesAdding(e, plan);
    }
    Accumulator[] merged = plan.newAccumulators();
    for (SessionAgg s : touching) {
      Accumulator[] theirs = s.accumulators(plan);
      for (int i = 0; i < merged.length; i++) {
        merged[i].merge(theirs[i]);
      }
    }
    return AggregatePlan.heldBytes(merged) + plan.heldBytesAdding(merged, e);
  }

  /** The aggregates' results, in plan order ({@link Accumulator#result}). */
  public Object[] results(AggregatePlan plan) {
    return plan.size() == 0 ? new Object[0] : AggregatePlan.results(accumulators(plan));
  }

  /** Brings {@code aggregates} up to date with the live accumulators, if they changed. */
  public void encodeIfChanged(AggregatePlan plan) {
    if (changed) {
      aggregates = plan.encode(live);
      changed = false;
    }
  }

  /** A copy of the fields for output; the aggregates' state is shared (it is never mutated). */
  public SessionAgg snapshot() {
    SessionAgg c = new SessionAgg();
    c.startMs = startMs;
    c.endMs = endMs;
    c.eventCount = eventCount;
    c.bytes = bytes;
    c.truncated = truncated;
    c.closed = closed;
    c.sessionId = sessionId;
    c.revision = revision;
    c.mergedIds = mergedIds;
    c.aggregates = aggregates;
    return c;
  }

  public long getStartMs() { return startMs; }
  public void setStartMs(long v) { startMs = v; }
  public long getEndMs() { return endMs; }
  public void setEndMs(long v) { endMs = v; }
  public long getEventCount() { return eventCount; }
  public void setEventCount(long v) { eventCount = v; }
  public long getBytes() { return bytes; }
  public void setBytes(long v) { bytes = v; }
  public boolean isTruncated() { return truncated; }
  public void setTruncated(boolean v) { truncated = v; }
  public boolean isClosed() { return closed; }
  public void setClosed(boolean v) { closed = v; }
  public String getSessionId() { return sessionId; }
  public void setSessionId(String v) { sessionId = v; }
  public int getRevision() { return revision; }
  public void setRevision(int v) { revision = v; }
  public List<String> getMergedIds() { return mergedIds; }
  public void setMergedIds(List<String> v) { mergedIds = v; }
  /** The encoded aggregate state, current as of the last {@link #encodeIfChanged}. */
  public byte[] getAggregates() { return aggregates; }
  /** Sets the encoded aggregate state, dropping any live accumulators. */
  public void setAggregates(byte[] v) {
    aggregates = v;
    live = null;
    changed = false;
  }
}
