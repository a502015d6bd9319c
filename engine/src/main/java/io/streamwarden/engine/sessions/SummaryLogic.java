package io.streamwarden.engine.sessions;

import java.util.List;

/**
 * The rules of an operator that keeps compact summaries per key ({@link UserSessions}), free of
 * Spark: what a key's events of a micro-batch do to its state, what the watermark makes due, and
 * when the next piece of state is due (every piece has a deadline).
 */
public interface SummaryLogic {
  /** Applies a key's events of one micro-batch, then emits what the watermark makes due. */
  List<Emitted> onEvents(String key, UserSessions state, List<Event> events, long watermarkMs);

  /** Emits and frees whatever the watermark has made due; called from the event-time timer. */
  List<Emitted> onWatermark(String key, UserSessions state, long watermarkMs);

  /** The earliest event time at which some state of this key is due, or NO_TIMER if none. */
  long nextDeadline(UserSessions state);
}
