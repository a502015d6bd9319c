package io.streamwarden.engine.join;

import io.streamwarden.engine.EngineInput;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The per-key rules of the interval join (Flink's interval join, with a deadline on every row),
 * free of Spark so that a test drives them with explicit rows and watermarks.
 *
 * <p>A left row at {@code l} and a right row at {@code r} match when {@code r} is in {@code
 * [l + lower, l + upper]}, both ends inclusive. A key's rows of a micro-batch are applied in
 * event-time order (ties in arrival order): each is matched against every buffered row of the
 * other side within the bound, one joined pair per match, then buffered. So each pair is emitted
 * exactly once, when the second of its rows arrives, whatever the batching.
 *
 * <p>With {@code W} the watermark and {@code L} the allowed lateness, a row at {@code ts < W - L}
 * is {@code too_late}; later rows are accepted even behind {@code W}. A buffered left row at
 * {@code l} is freed once {@code W > l + upper + L}, a right row at {@code r} once {@code W > r -
 * lower + L}: after that, no row the join still accepts can match it. A left-outer join emits a
 * freed left row that never matched alone (right side null); it is written only when no match
 * can come, so nothing is ever retracted. A key buffering {@code max_rows_per_key} rows (both
 * sides) dead-letters an arriving row as {@code key_buffer_full}, unmatched and unbuffered.
 */
public final class JoinLogic {
  private static final Comparator<JoinRecord> BY_TIME = Comparator.comparingLong(JoinRecord::tsMs);

  private final JoinPlan plan;

  public JoinLogic(JoinPlan plan) {
    this.plan = plan;
  }

  /**
   * Applies a key's rows of a micro-batch to its buffer, then frees (and, left-outer, emits) what
   * the watermark allows. Rows due before the batch are freed first, so they take no room under
   * the cap; that changes no match, since a due row can match no accepted row.
   */
  public List<JoinEmitted> onRows(String key, JoinBuffer buffer, List<JoinRecord> records,
      long watermarkMs) {
    List<JoinEmitted> out = new ArrayList<>();
    free(key, buffer, watermarkMs, out);
    List<JoinRecord> ordered = new ArrayList<>(records);
    ordered.sort(BY_TIME); // stable: ties keep their arrival order
    for (JoinRecord r : ordered) {
      apply(key, buffer, r, watermarkMs, out);
    }
    free(key, buffer, watermarkMs, out);
    return out;
  }

  /** Frees (and, left-outer, emits) what the watermark allows; called from the timer. */
  public List<JoinEmitted> onWatermark(String key, JoinBuffer buffer, long watermarkMs) {
    List<JoinEmitted> out = new ArrayList<>();
    free(key, buffer, watermarkMs, out);
    return out;
  }

  /**
   * The earliest watermark at which a buffered row is freed (its deadline + 1: a row is freed
   * once the watermark passes its deadline), or {@link JoinBuffer#NO_TIMER} if none is buffered.
   * After a call of {@link #onRows} or {@link #onWatermark} it is later than that call's
   * watermark.
   */
  public long nextDeadline(JoinBuffer buffer) {
    long next = JoinBuffer.NO_TIMER;
    for (Buffered b : buffer.getLeft()) {
      next = earliest(next, leftDeadline(b.getTsMs()));
    }
    for (Buffered b : buffer.getRight()) {
      next = earliest(next, rightDeadline(b.getTsMs()));
    }
    return next == JoinBuffer.NO_TIMER ? next : add(next, 1);
  }

  /** The last watermark that keeps a left row at {@code tsMs}: {@code tsMs + upper + L}. */
  public long leftDeadline(long tsMs) {
    return add(add(tsMs, plan.upperMs), plan.allowedLatenessMs);
  }

  /** The last watermark that keeps a right row at {@code tsMs}: {@code tsMs - lower + L}. */
  public long rightDeadline(long tsMs) {
    return add(subtract(tsMs, plan.lowerMs), plan.allowedLatenessMs);
  }

  private static long earliest(long next, long due) {
    return next == JoinBuffer.NO_TIMER || due < next ? due : next;
  }

  private void apply(String key, JoinBuffer buffer, JoinRecord r, long watermarkMs,
      List<JoinEmitted> out) {
    String name = plan.sourceName(r.side());
    String side = (r.isLeft() ? "left" : "right") + " (" + name + ")";
    if (r.tsMs() < subtract(watermarkMs, plan.allowedLatenessMs)) {
      out.add(JoinEmitted.deadLetter(key, r.tsMs(), r.raw(), EngineInput.TOO_LATE, String.format(
          "%s row at %d is %d ms behind the watermark %d, beyond allowed_lateness %d ms", side,
          r.tsMs(), subtract(watermarkMs, r.tsMs()), watermarkMs, plan.allowedLatenessMs),
          name));
      return;
    }
    if (buffer.rowCount() >= plan.maxRowsPerKey) {
      out.add(JoinEmitted.deadLetter(key, r.tsMs(), r.raw(), EngineInput.KEY_BUFFER_FULL,
          String.format("the key already buffers the maximum of %d rows (max_rows_per_key, both "
              + "sides together); this %s row at %d was neither matched nor buffered",
              plan.maxRowsPerKey, side, r.tsMs()), name));
      return;
    }
    Buffered mine = new Buffered(r.tsMs(), r.row());
    List<Buffered> others = buffer.side(!r.isLeft());
    // the other side's times that match: right in [l + lower, l + upper], left in [r - upper,
    // r - lower]
    long from = r.isLeft() ? add(r.tsMs(), plan.lowerMs) : subtract(r.tsMs(), plan.upperMs);
    long to = r.isLeft() ? add(r.tsMs(), plan.upperMs) : subtract(r.tsMs(), plan.lowerMs);
    for (int i = firstAtOrAfter(others, from); i < others.size()
        && others.get(i).getTsMs() <= to; i++) {
      Buffered other = others.get(i);
      out.add(r.isLeft() ? JoinEmitted.pair(key, mine, other)
          : JoinEmitted.pair(key, other, mine));
      other.setMatched(true);
      mine.setMatched(true);
    }
    List<Buffered> own = buffer.side(r.isLeft());
    // after the rows of the same time: ties keep their arrival order
    own.add(r.tsMs() == Long.MAX_VALUE ? own.size() : firstAtOrAfter(own, r.tsMs() + 1), mine);
  }

  /** The index of the first row of {@code rows} (ordered by time) at or after {@code fromMs}. */
  private static int firstAtOrAfter(List<Buffered> rows, long fromMs) {
    int lo = 0;
    int hi = rows.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (rows.get(mid).getTsMs() >= fromMs) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  private void free(String key, JoinBuffer buffer, long watermarkMs, List<JoinEmitted> out) {
    List<Buffered> left = new ArrayList<>(buffer.getLeft().size());
    for (Buffered b : buffer.getLeft()) {
      if (leftDeadline(b.getTsMs()) >= watermarkMs) {
        left.add(b);
      } else if (plan.leftOuter && !b.isMatched()) {
        out.add(JoinEmitted.leftAlone(key, b));
      }
    }
    List<Buffered> right = new ArrayList<>(buffer.getRight().size());
    for (Buffered b : buffer.getRight()) {
      if (rightDeadline(b.getTsMs()) >= watermarkMs) {
        right.add(b);
      }
    }
    buffer.setLeft(left);
    buffer.setRight(right);
  }

  /** {@code a + b}, held at the ends of long instead of wrapping. */
  static long add(long a, long b) {
    long s = a + b;
    if (((a ^ s) & (b ^ s)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return s;
  }

  /** {@code a - b}, held at the ends of long instead of wrapping. */
  static long subtract(long a, long b) {
    long s = a - b;
    if (((a ^ b) & (a ^ s)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return s;
  }
}
