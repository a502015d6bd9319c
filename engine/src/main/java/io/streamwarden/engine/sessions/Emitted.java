package io.streamwarden.engine.sessions;

import java.util.List;

/** One output record of the session logic: a session revision, a dead letter or a history event. */
public final class Emitted {
  public static final String SESSION = "session";
  public static final String DEAD_LETTER = "dead_letter";
  /**
   * A late event that found no session in state but is within the history lateness: it leaves
   * the engine with its payload, to be merged into the history store's sessions.
   */
  public static final String HISTORY = "history";

  public final String kind;
  public final String key;
  /** Snapshot of the session at emission, or null for a dead letter or history event. */
  public final SessionAgg session;
  public final List<String> mergedIds;
  /** The session's aggregate results at emission, in plan order; null unless a session. */
  public final Object[] results;
  /**
   * The session's encoded aggregate state at emission when the plan keeps state ({@link
   * SessionPlan#keepState}) and has aggregates, else null.
   */
  public final byte[] state;
  public final Event event;
  public final String reason;
  public final String detail;

  private Emitted(String kind, String key, SessionAgg session, List<String> mergedIds,
      Object[] results, byte[] state, Event event, String reason, String detail) {
    this.kind = kind;
    this.key = key;
    this.session = session;
    this.mergedIds = mergedIds;
    this.results = results;
    this.state = state;
    this.event = event;
    this.reason = reason;
    this.detail = detail;
  }

  public static Emitted session(String key, SessionAgg s, List<String> mergedIds, Object[] results,
      byte[] state) {
    return new Emitted(SESSION, key, s, mergedIds, results, state, null, null, null);
  }

  static Emitted history(String key, Event e) {
    return new Emitted(HISTORY, key, null, null, null, null, e, null, null);
  }

  public static Emitted deadLetter(String key, Event e, String reason, String detail) {
    return new Emitted(DEAD_LETTER, key, null, null, null, null, e, reason, detail);
  }
}
