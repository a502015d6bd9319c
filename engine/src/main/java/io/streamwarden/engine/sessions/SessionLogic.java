package io.streamwarden.engine.sessions;

import io.streamwarden.engine.EngineInput;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-user session rules, free of Spark so that they can be driven by a test harness.
 *
 * <p>A session is a maximal run of one user's events whose consecutive gaps are smaller than
 * {@code gap}. It is emitted (revision 0) once the watermark reaches {@code end + gap}; it is
 * then kept as a compact summary until {@code end + gap + allowedLateness} so that a late event
 * can still update it (revision + 1, at most once per call), and forgotten after that. Every
 * piece of state therefore has a deadline, whether or not the user sends another event; {@link
 * #nextDeadline} gives the earliest one, which the caller turns into an event-time timer.
 *
 * <p>Late events (event time below the watermark) join any open or retained session they fall
 * within {@code gap} of. A late event that joins none starts a new session only if it is less
 * than {@code allowedLateness} behind the watermark; otherwise it is dead-lettered as {@code
 * too_late}, or, when the plan has a history lateness and the event is within it, leaves as a
 * {@link Emitted#HISTORY} record for {@link #mergeHistory}. Events that would push a session past its page or byte cap are dead-lettered and the
 * session is flagged as truncated. Every event thus ends up in exactly one session or one dead
 * letter.
 */
public final class SessionLogic {
  private static final Comparator<Event> EVENT_ORDER =
      Comparator.<Event>comparingLong(e -> e.tsMs)
          .thenComparingLong(e -> e.page)
          .thenComparing(e -> e.raw == null ? "" : e.raw);

  private final SessionPlan plan;

  public SessionLogic(SessionPlan plan) {
    this.plan = plan;
  }

  public SessionPlan plan() {
    return plan;
  }

  /**
   * Applies one micro-batch of a user's events, then closes what the watermark allows.
   *
   * <p>Events are applied in event-time order (ties broken by content) so that the result does
   * not depend on the order in which Spark delivered them. An event too late to start a session
   * of its own waits until the others are applied: a later event of the same batch may open the
   * session it belongs to (and it may then bridge for an earlier one). Only what joins nothing
   * after that is {@code too_late}.
   */
  public List<Emitted> onEvents(
      String userId, UserSessions state, List<Event> events, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    Map<SessionAgg, Boolean> updatedAfterEmission = new IdentityHashMap<>();
    expire(userId, state, watermarkMs, out);
    events.sort(EVENT_ORDER);
    List<Event> waiting = new ArrayList<>();
    for (Event e : events) {
      if (!apply(userId, state, e, watermarkMs, plan.allowedLatenessMs, out,
          updatedAfterEmission)) {
        waiting.add(e);
      }
    }
    // Latest first, so that a chain of waiting events reaches its session in one pass; repeat
    // while some still join (the passes are bounded by the number of waiting events).
    boolean joined = !waiting.isEmpty();
    while (joined) {
      joined = false;
      List<Event> still = new ArrayList<>();
      for (int i = waiting.size() - 1; i >= 0; i--) {
        Event e = waiting.get(i);
        if (apply(userId, state, e, watermarkMs, plan.allowedLatenessMs, out,
            updatedAfterEmission)) {
          joined = true;
        } else {
          still.add(e);
        }
      }
      Collections.reverse(still);
      waiting = still;
    }
    for (Event e : waiting) {
      if (plan.historyOn() && watermarkMs - e.tsMs < plan.historyLatenessMs) {
        out.add(Emitted.history(userId, e));
      } else {
        out.add(Emitted.deadLetter(userId, e, EngineInput.TOO_LATE, tooLateDetail(e, watermarkMs)));
      }
    }
    closeDue(userId, state, watermarkMs, out, updatedAfterEmission);
    return out;
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
   * Merges late events that left the engine as {@link Emitted#HISTORY} records into a user's
   * stored sessions, with the rules of {@link #onEvents}: an event joins the sessions within
   * {@code gap} of it (merging those it bridges, the earliest emitted one keeping its id),
   * starts a session if it touches none, or is dead-lettered at a cap. Every stored session
   * that changed is emitted once, {@code revision} + 1, naming the sessions it absorbed; every
   * new session is emitted with revision 0. Nothing is kept: {@code stored} is the caller's
   * copy, built from the store for this call.
   *
   * @param stored the user's stored sessions that the events may touch, each with its id and
   *     revision, ordered by start
   */
  public List<Emitted> mergeHistory(
      String userId, UserSessions stored, List<Event> events, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    Map<SessionAgg, Boolean> updated = new IdentityHashMap<>();
    for (SessionAgg s : stored.getSessions()) {
      s.setClosed(true);
    }
    events.sort(EVENT_ORDER);
    for (Event e : events) {
      apply(userId, stored, e, watermarkMs, Long.MAX_VALUE, out, updated);
    }
    for (SessionAgg s : stored.getSessions()) {
      if (s.getSessionId() == null || updated.containsKey(s)) {
        emit(userId, s, out);
      }
    }
    return out;
  }

  /**
   * Forgets sessions whose lateness horizon has passed (emitting any never emitted), before a
   * batch's events are applied. Spark runs a key's input rows before its due timers, so without
   * this an event could join a session that is already past its deadline.
   */
  private void expire(String userId, UserSessions state, long watermarkMs, List<Emitted> out) {
    List<SessionAgg> kept = new ArrayList<>(state.getSessions().size());
    for (SessionAgg s : state.getSessions()) {
      if (s.getEndMs() + plan.gapMs + plan.allowedLatenessMs > watermarkMs) {
        kept.add(s);
      } else if (!s.isClosed()) {
        emit(userId, s, out);
      }
    }
    state.setSessions(kept);
  }

  /** Emits and frees whatever the watermark has made due; called from the event-time timer. */
  public List<Emitted> onWatermark(String userId, UserSessions state, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    closeDue(userId, state, watermarkMs, out, new IdentityHashMap<>());
    return out;
  }

  /** The earliest event time at which some state of this user is due, or NO_TIMER if none. */
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
  private boolean apply(String userId, UserSessions state, Event e, long watermarkMs,
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
      if (e.size > plan.maxSessionBytes) {
        out.add(Emitted.deadLetter(userId, e, EngineInput.SESSION_BYTE_CAP, String.format(
            "record of %d bytes exceeds max_session_bytes %d on its own",
            e.size, plan.maxSessionBytes)));
        return true;
      }
      sessions.add(insertAt, SessionAgg.of(e, plan.collectUrls));
      return true;
    }
    long pages = 1;
    long bytes = e.size;
    for (SessionAgg s : touching) {
      pages += s.getPageCount();
      bytes += s.getBytes();
    }
    if (pages > plan.maxPages || bytes > plan.maxSessionBytes) {
      boolean pageCap = pages > plan.maxPages;
      out.add(Emitted.deadLetter(userId, e, pageCap ? EngineInput.SESSION_PAGE_CAP : EngineInput.SESSION_BYTE_CAP, pageCap
          ? String.format("session already holds the maximum of %d pages", plan.maxPages)
          : String.format("session would hold %d bytes, over max_session_bytes %d",
              bytes, plan.maxSessionBytes)));
      for (SessionAgg s : touching) {
        s.setTruncated(true);
        markUpdated(s, updatedAfterEmission);
      }
      return true;
    }
    SessionAgg target = survivor(touching);
    for (SessionAgg s : touching) {
      if (s != target) {
        target.absorb(s);
        sessions.remove(s);
      }
    }
    target.absorb(SessionAgg.of(e, plan.collectUrls));
    target.setClosed(target.isClosed() && target.getEndMs() + plan.gapMs <= watermarkMs);
    markUpdated(target, updatedAfterEmission);
    return true;
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

  private void closeDue(String userId, UserSessions state, long watermarkMs, List<Emitted> out,
      Map<SessionAgg, Boolean> updatedAfterEmission) {
    List<SessionAgg> kept = new ArrayList<>(state.getSessions().size());
    for (SessionAgg s : state.getSessions()) {
      boolean due = s.getEndMs() + plan.gapMs <= watermarkMs;
      if (due && (!s.isClosed() || updatedAfterEmission.containsKey(s))) {
        emit(userId, s, out);
      }
      if (!due || s.getEndMs() + plan.gapMs + plan.allowedLatenessMs > watermarkMs) {
        kept.add(s);
      }
    }
    state.setSessions(kept);
  }

  private static void emit(String userId, SessionAgg s, List<Emitted> out) {
    if (s.getSessionId() == null) {
      s.setSessionId(sessionId(userId, s.getStartMs()));
    }
    s.setRevision(s.getRevision() + 1);
    s.setClosed(true);
    List<String> merged = s.getMergedIds();
    s.setMergedIds(null);
    out.add(Emitted.session(userId, s.snapshot(), merged));
  }

  /** A deterministic id: FNV-1a 64 of the user id and the session start at first emission. */
  public static String sessionId(String userId, long startMs) {
    long h = 0xcbf29ce484222325L;
    String text = userId + '\u0000' + startMs;
    for (int i = 0; i < text.length(); i++) {
      h ^= text.charAt(i);
      h *= 0x100000001b3L;
    }
    return String.format("%016x", h);
  }
}
