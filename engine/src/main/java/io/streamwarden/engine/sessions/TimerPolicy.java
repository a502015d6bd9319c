package io.streamwarden.engine.sessions;

/**
 * Which event-time timer a user's state keeps after a call of {@link SessionProcessor}.
 *
 * <p>Each user holds at most one timer, never later than its next deadline, so every piece of
 * state is looked at no later than its deadline. Moving a timer costs a delete and a register
 * (two state-store reads and four writes); an active user's deadline moves with almost every
 * micro-batch. So a registered timer that is still ahead of the watermark and not later than the
 * new deadline is kept: when it fires early, nothing is due, and the handler re-arms it at the
 * deadline of that moment. A timer the watermark has already reached would fire in this very
 * batch only to be re-armed, so it is moved at once instead.
 */
public final class TimerPolicy {
  private TimerPolicy() {}

  /**
   * The timer to hold after a call.
   *
   * @param registered the timer registered now, or {@link UserSessions#NO_TIMER}
   * @param nextDeadline {@link SessionLogic#nextDeadline} of the state after the call, which is
   *     later than {@code watermarkMs}, or {@link UserSessions#NO_TIMER} when the state is empty
   * @param watermarkMs the watermark of the current micro-batch
   * @return {@code registered} to keep it, else {@code nextDeadline}
   */
  public static long timerToHold(long registered, long nextDeadline, long watermarkMs) {
    boolean keep = registered != UserSessions.NO_TIMER
        && nextDeadline != UserSessions.NO_TIMER
        && registered > watermarkMs
        && registered <= nextDeadline;
    return keep ? registered : nextDeadline;
  }
}
