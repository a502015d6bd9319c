package io.streamwarden.engine.sessions;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * All state one key holds: open sessions and closed sessions still inside their lateness
 * horizon, ordered by start, plus the event time of the one registered timer, which is never
 * later than their next deadline ({@link TimerPolicy}).
 */
public final class UserSessions implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Value of {@link #getTimerMs()} when no timer is registered. */
  public static final long NO_TIMER = Long.MIN_VALUE;

  private List<SessionAgg> sessions = new ArrayList<>();
  private long timerMs = NO_TIMER;

  public UserSessions() {}

  public List<SessionAgg> getSessions() { return sessions; }
  public void setSessions(List<SessionAgg> v) { sessions = v == null ? new ArrayList<>() : v; }
  public long getTimerMs() { return timerMs; }
  public void setTimerMs(long v) { timerMs = v; }

  public boolean holdsNothing() {
    return sessions.isEmpty();
  }
}
