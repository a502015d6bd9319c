package io.streamwarden.engine.patterns;

import java.util.Arrays;
import java.util.Comparator;

/**
 * One event of a key as the pattern engine sees it: event time, which stage conditions it met
 * ({@code mask}, one bit per stage), and the selected field values.
 *
 * <p>{@code seq} orders events of equal time by arrival (content-sorted within a batch, so it is
 * deterministic); {@code ord} is the position in which the NFA consumed the event, the "event
 * id" that skip strategies compare.
 */
public final class PEvent {
  /** Event-time order, ties by arrival. */
  public static final Comparator<PEvent> TIME_ORDER =
      Comparator.<PEvent>comparingLong(e -> e.tsMs).thenComparingLong(e -> e.seq);
  /** A content order for the events of one batch, so that delivery order does not matter. */
  public static final Comparator<PEvent> CONTENT_ORDER =
      Comparator.<PEvent>comparingLong(e -> e.tsMs).thenComparingLong(e -> e.mask)
          .thenComparing(e -> Arrays.toString(e.values));

  public final long tsMs;
  public final long mask;
  public final String[] values;
  public long seq;
  public long ord = -1;

  public PEvent(long tsMs, long mask, String[] values) {
    this.tsMs = tsMs;
    this.mask = mask;
    this.values = values;
  }

  public boolean meets(long bit) {
    return (mask & bit) != 0;
  }
}
