package io.streamwarden.engine.sessions;

import io.streamwarden.engine.EngineInput;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-key session rules, free of Spark so that they can be driven by a test harness.
 *
 * <p>A session is a maximal run of one key's events whose consecutive gaps are smaller than
 * {@code gap}. It is emitted (revision 0) once the watermark reaches {@code end + gap}; it is
 * then kept as a compact summary until {@code end + gap + allowedLateness} so that a late event
 * can still update it (revision + 1, at most once per call), and forgotten after that. Every
 * piece of state therefore has a deadline, whether or not the key sends another event; {@link
 * #nextDeadline} gives the earliest one, which the caller turns into an event-time timer.
 *
 * <p>Late events (event time below the watermark) join any open or retained session they fall
 * within {@code gap} of. A late event that joins none starts a new session only if it is less
 * than {@code allowedLateness} behind the watermark; otherwise it is dead-lettered as {@code
 * too_late}, or, when the plan has a history lateness and the event is within it, leaves as a
 * {@link Emitted#HISTORY} record for {@link #mergeHistory}. Events that would push a session
 * past its event or byte cap are dead-lettered and the session is flagged as truncated; the byte
 * cap counts the records' bytes and the bytes of the values the aggregates hold. Every event
 * thus ends up in exactly one session or one dead letter.
 *
 * <p>Each session's aggregates ({@link AggregatePlan}) are updated as events join it; their
 * results do not depend on how the events were batched: ties in event time go by arrival order
 * (a later batch arrives later; within a batch, the order Spark delivered the rows in).
 */
public final class SessionLogic implements SummaryLogic {
  private final SessionPlan plan;
  private final AggregatePlan aggregates;

  public SessionLogic(SessionPlan plan) {
    this.plan = plan;
    this.aggregates = plan.aggregates;
  }

  public SessionPlan plan() {
    return plan;
  }

  /**
   * Applies one micro-batch of a key's events, then closes what the watermark allows.
   *
   * <p>Events are applied in event-time order, ties in the order given (a stable sort), which
   * is their arrival order. An event too late to start a session of its own waits until the
   * others are applied: a later event of the same batch may open the session it belongs to (and
   * it may then bridge for an earlier one). Only what joins nothing after that is {@code
   * too_late}.
   */
  public List<Emitted> onEvents(
      String key, UserSessions state, List<Event> events, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    Map<SessionAgg, Boolean> updatedAfterEmission = new IdentityHashMap<>();
    expire(key, state, watermarkMs, out);
    events.sort((a, b) -> Long.compare(a.tsMs, b.tsMs));
    List<Event> waiting = new ArrayList<>();
    for (Event e : events) {
      if (!apply(key, state, e, watermarkMs, plan.allowedLatenessMs, out,
          updatedAfterEmission)) {
        waiting.add(e);
      }
    }
    while (!waiting.isEmpty()) {
      List<Event> still = applyWaiting(key, state, waiting, watermarkMs, out,
          updatedAfterEmission);
      if (still.size() == waiting.size()) {
        break;
      }
      waiting = still;
    }
    for (Event e : waiting) {
      if (plan.historyOn() && watermarkMs - e.tsMs < plan.historyLatenessMs) {
        out.add(Emitted.history(key, e));
      } else {
        out.add(Emitted.deadLetter(key, e, EngineInput.TOO_LATE, tooLateDetail(e, watermarkMs)));
      }
    }
    closeDue(key, state, watermarkMs, out, updatedAfterEmission);
    encodeChanged(state);
    return out;
  }

  /**
   * One pass over the waiting events, latest time first so that a chain of them reaches its
   * session in one pass; events of one time in arrival order, so that ties keep their order.
   * Returns those that still join nothing, in time order.
   */
  private List<Event> applyWaiting(String key, UserSessions state, List<Event> waiting,
      long watermarkMs, List<Emitted> out, Map<SessionAgg, Boolean> updatedAfterEmission) {
    boolean[] joined = new boolean[waiting.size()];
    int end = waiting.size();
    while (end > 0) {
      int start = end - 1;
      while (start > 0 && waiting.get(start - 1).tsMs == waiting.get(end - 1).tsMs) {
        start--;
      }
      for (int i = start; i < end; i++) {
        joined[i] = apply(key, state, waiting.get(i), watermarkMs, plan.allowedLatenessMs, out,
            updatedAfterEmission);
      }
      end = start;
    }
    List<Event> still = new ArrayList<>();
    for (int i = 0; i < joined.length; i++) {
      if (!joined[i]) {
        still.add(waiting.get(i));
      }
    }
    return still;
  }

  private String tooLateDetail(Event e, long watermarkMs) {
    String horizon = plan.historyOn()
        ? String.format("is inside allowed_lateness (%d ms), and it is beyond history_lateness "
            + "(%d ms)", plan.allowedLatenessMs, plan.historyLatenessMs)
        : String.format("is still open or inside allowed_lateness (%d ms)",
            plan.allowedLatenessMs);
    return String.format("event time %d is %d ms behind the watermark %d and no session within "
        + "the gap %s", e.tsMs, watermarkMs - e.tsMs, watermarkMs, horizon);
  }

  /**
   * Merges late events that left the engine as {@link Emitted#HISTORY} records into a key's
   * stored sessions, with the rules of {@link #onEvents}: an event joins the sessions within
   * {@code gap} of it (merging those it bridges, the earliest emitted one keeping its id),
   * starts a session if it touches none, or is dead-lettered at a cap. Every stored session
   * that changed is emitted once, {@code revision} + 1, naming the sessions it absorbed; every
   * new session is emitted with revision 0. Nothing is kept: {@code stored} is the caller's
   * copy, built from the store for this call.
   *
   * @param stored the key's stored sessions that the events may touch, each with its id and
   *     revision, ordered by start
   */
  public List<Emitted> mergeHistory(
      String key, UserSessions stored, List<Event> events, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    Map<SessionAgg, Boolean> updated = new IdentityHashMap<>();
    for (SessionAgg s : stored.getSessions()) {
      s.setClosed(true);
    }
    events.sort((a, b) -> Long.compare(a.tsMs, b.tsMs));
    for (Event e : events) {
      apply(key, stored, e, watermarkMs, Long.MAX_VALUE, out, updated);
    }
    for (SessionAgg s : stored.getSessions()) {
      if (s.getSessionId() == null || updated.containsKey(s)) {
        emit(key, s, out);
      }
    }
    encodeChanged(stored);
    return out;
  }

  /**
   * Forgets sessions whose lateness horizon has passed (emitting any never emitted), before a
   * batch's events are applied. Spark runs a key's input rows before its due timers, so without
   * this an event could join a session that is already past its deadline.
   */
  private void expire(String key, UserSessions state, long watermarkMs, List<Emitted> out) {
    List<SessionAgg> kept = new ArrayList<>(state.getSessions().size());
    for (SessionAgg s : state.getSessions()) {
      if (s.getEndMs() + plan.gapMs + plan.allowedLatenessMs > watermarkMs) {
        kept.add(s);
      } else if (!s.isClosed()) {
        emit(key, s, out);
      }
    }
    state.setSessions(kept);
  }

  /** Emits and frees whatever the watermark has made due; called from the event-time timer. */
  public List<Emitted> onWatermark(String key, UserSessions state, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    closeDue(key, state, watermarkMs, out, new IdentityHashMap<>());
    encodeChanged(state);
    return out;
  }

  /** The earliest event time at which some state of this key is due, or NO_TIMER if none. */
  public long nextDeadline(UserSessions state) {
    long next = UserSessions.NO_TIMER;
    for (SessionAgg s : state.getSessions()) {
      long due = s.isClosed() ? s.getEndMs() + plan.gapMs + plan.allowedLatenessMs
          : s.getEndMs() + plan.gapMs;
      if (next == UserSessions.NO_TIMER || due < next) {
        next = due;
      }
    }
    return next;
  }

  /**
   * Applies one event: it joins (and merges) the sessions within {@code gap}, starts a session,
   * or is dead-lettered at a cap. Returns false, changing nothing, for an event that touches
   * none and is {@code latenessMs} or more behind the watermark (too late to start a session).
   */
  private boolean apply(String key, UserSessions state, Event e, long watermarkMs,
      long latenessMs, List<Emitted> out, Map<SessionAgg, Boolean> updatedAfterEmission) {
    List<SessionAgg> sessions = state.getSessions();
    List<SessionAgg> touching = new ArrayList<>(2);
    int insertAt = 0;
    for (SessionAgg s : sessions) {
      if (s.getStartMs() - e.tsMs < plan.gapMs && e.tsMs - s.getEndMs() < plan.gapMs) {
        touching.add(s);
      }
      if (s.getStartMs() <= e.tsMs) {
        insertAt++;
      }
    }
    if (touching.isEmpty()) {
      boolean late = e.tsMs < watermarkMs;
      if (late && watermarkMs - e.tsMs >= latenessMs) {
        return false;
      }
      SessionAgg fresh = SessionAgg.of(e, aggregates);
      long held = fresh.heldBytes(aggregates);
      if (e.size + held > plan.maxSessionBytes) {
        out.add(Emitted.deadLetter(key, e, EngineInput.SESSION_BYTE_CAP, held == 0
            ? String.format("record of %d bytes exceeds max_session_bytes %d on its own",
                e.size, plan.maxSessionBytes)
            : String.format("record of %d bytes with %d bytes of aggregate values exceeds "
                + "max_session_bytes %d on its own", e.size, held, plan.maxSessionBytes)));
        return true;
      }
      sessions.add(insertAt, fresh);
      return true;
    }
    String cap = capReached(key, touching, e, out);
    if (cap != null) {
      for (SessionAgg s : touching) {
        s.setTruncated(true);
        markUpdated(s, updatedAfterEmission);
      }
      return true;
    }
    SessionAgg target = survivor(touching);
    for (SessionAgg s : touching) {
      if (s != target) {
        target.absorb(s, aggregates);
        sessions.remove(s);
      }
    }
    target.add(e, aggregates);
    target.setClosed(target.isClosed() && target.getEndMs() + plan.gapMs <= watermarkMs);
    markUpdated(target, updatedAfterEmission);
    return true;
  }

  /**
   * The reason (and a dead letter in {@code out}) if {@code e} cannot join {@code touching}:
   * one event too many, or more bytes than the cap (the records' bytes, this one's included,
   * plus the bytes the merged aggregates would hold with it); null if it can.
   */
  private String capReached(String key, List<SessionAgg> touching, Event e, List<Emitted> out) {
    long events = 1;
    long recordBytes = e.size;
    for (SessionAgg s : touching) {
      events += s.getEventCount();
      recordBytes += s.getBytes();
    }
    if (events > plan.maxEvents) {
      out.add(Emitted.deadLetter(key, e, EngineInput.SESSION_EVENT_CAP, String.format(
          "session already holds the maximum of %d events", plan.maxEvents)));
      return EngineInput.SESSION_EVENT_CAP;
    }
    long held = SessionAgg.heldBytesJoining(touching, e, aggregates);
    if (recordBytes + held > plan.maxSessionBytes) {
      out.add(Emitted.deadLetter(key, e, EngineInput.SESSION_BYTE_CAP, String.format(
          "session would hold %d bytes of records and %d bytes of aggregate values, over "
              + "max_session_bytes %d", recordBytes, held, plan.maxSessionBytes)));
      return EngineInput.SESSION_BYTE_CAP;
    }
    return null;
  }

  /** The session whose identity survives a merge: the earliest one already emitted, if any. */
  private static SessionAgg survivor(List<SessionAgg> touching) {
    for (SessionAgg s : touching) {
      if (s.getSessionId() != null) {
        return s;
      }
    }
    return touching.get(0);
  }

  private static void markUpdated(SessionAgg s, Map<SessionAgg, Boolean> updatedAfterEmission) {
    if (s.getSessionId() != null) {
      updatedAfterEmission.put(s, Boolean.TRUE);
    }
  }

  private void closeDue(String key, UserSessions state, long watermarkMs, List<Emitted> out,
      Map<SessionAgg, Boolean> updatedAfterEmission) {
    List<SessionAgg> kept = new ArrayList<>(state.getSessions().size());
    for (SessionAgg s : state.getSessions()) {
      boolean due = s.getEndMs() + plan.gapMs <= watermarkMs;
      if (due && (!s.isClosed() || updatedAfterEmission.containsKey(s))) {
        emit(key, s, out);
      }
      if (!due || s.getEndMs() + plan.gapMs + plan.allowedLatenessMs > watermarkMs) {
        kept.add(s);
      }
    }
    state.setSessions(kept);
  }

  private void emit(String key, SessionAgg s, List<Emitted> out) {
    if (s.getSessionId() == null) {
      s.setSessionId(sessionId(key, s.getStartMs()));
    }
    s.setRevision(s.getRevision() + 1);
    s.setClosed(true);
    List<String> merged = s.getMergedIds();
    s.setMergedIds(null);
    byte[] kept = null;
    if (plan.keepState && aggregates.size() > 0) {
      s.encodeIfChanged(aggregates);
      kept = s.getAggregates();
    }
    out.add(Emitted.session(key, s.snapshot(), merged, s.results(aggregates), kept));
  }

  /** Brings every session's encoded aggregates up to date, before the state is written. */
  private void encodeChanged(UserSessions state) {
    for (SessionAgg s : state.getSessions()) {
      s.encodeIfChanged(aggregates);
    }
  }

  /** A deterministic id: FNV-1a 64 of the key and the session start at first emission. */
  public static String sessionId(String key, long startMs) {
    long h = 0xcbf29ce484222325L;
    String text = key + '\u0000' + startMs;
    for (int i = 0; i < text.length(); i++) {
      h ^= text.charAt(i);
      h *= 0x100000001b3L;
    }
    return String.format("%016x", h);
  }
}
