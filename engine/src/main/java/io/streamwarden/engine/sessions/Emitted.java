package io.streamwarden.engine.sessions;

import java.util.List;

/** One output record of the session logic: a session revision or a dead letter. */
public final class Emitted {
  public static final String SESSION = "session";
  public static final String DEAD_LETTER = "dead_letter";
  /**
   * A late event that found no session in state but is within the history lateness: it leaves
   * the engine with its payload, to be merged into the history store's sessions.
   */
  public static final String HISTORY = "history";

  public final String kind;
  public final String userId;
  /** Snapshot of the session at emission, or null for a dead letter. */
  public final SessionAgg session;
  public final List<String> mergedIds;
  public final Event event;
  public final String reason;
  public final String detail;

  private Emitted(String kind, String userId, SessionAgg session, List<String> mergedIds,
      Event event, String reason, String detail) {
    this.kind = kind;
    this.userId = userId;
    this.session = session;
    this.mergedIds = mergedIds;
    this.event = event;
    this.reason = reason;
    this.detail = detail;
  }

  static Emitted session(String userId, SessionAgg s, List<String> mergedIds) {
    return new Emitted(SESSION, userId, s, mergedIds, null, null, null);
  }

  static Emitted history(String userId, Event e) {
    return new Emitted(HISTORY, userId, null, null, e, null, null);
  }

  public static Emitted deadLetter(String userId, Event e, String reason, String detail) {
    return new Emitted(DEAD_LETTER, userId, null, null, e, reason, detail);
  }
}
