package io.streamwarden.engine.join;

import io.streamwarden.engine.sessions.UserSessions;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * All state one key of the join holds (a Java bean, the value of state {@link
 * JoinProcessor#STATE_NAME}): each side's rows that can still match, each side ordered by event
 * time (ties in arrival order), plus the event time of the one registered timer, which is never
 * later than the earliest moment a row is freed ({@link JoinLogic#nextDeadline}).
 */
public final class JoinBuffer implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Value of {@link #getTimerMs()} when no timer is registered. */
  public static final long NO_TIMER = UserSessions.NO_TIMER;

  private List<Buffered> left = new ArrayList<>();
  private List<Buffered> right = new ArrayList<>();
  private long timerMs = NO_TIMER;

  public JoinBuffer() {}

  public List<Buffered> getLeft() { return left; }
  public void setLeft(List<Buffered> v) { left = v == null ? new ArrayList<>() : copy(v); }
  public List<Buffered> getRight() { return right; }
  public void setRight(List<Buffered> v) { right = v == null ? new ArrayList<>() : copy(v); }
  public long getTimerMs() { return timerMs; }
  public void setTimerMs(long v) { timerMs = v; }

  /** The left rows if {@code isLeft}, else the right rows. */
  public List<Buffered> side(boolean isLeft) {
    return isLeft ? left : right;
  }

  /** How many rows the key buffers, both sides together. */
  public int rowCount() {
    return left.size() + right.size();
  }

  public boolean holdsNothing() {
    return left.isEmpty() && right.isEmpty();
  }

  /** A list the logic may change (a decoded state's list need not be). */
  private static List<Buffered> copy(List<Buffered> v) {
    return new ArrayList<>(v);
  }
}
