package io.streamwarden.engine.join;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The interval join rules of {@link JoinLogic} with explicit event times in milliseconds: rows of
 * one key in, batch by batch with the batch's watermark, joined rows and dead letters out, each
 * written as one line of text ({@code joined L100 R105}, {@code joined L100 -}, {@code too_late
 * right}).
 */
class JoinLogicTest {
  /** One key's buffer, driven batch by batch as the processor drives it. */
  private static final class Key {
    final JoinLogic logic;
    final JoinBuffer buffer = new JoinBuffer();
    final List<JoinEmitted> all = new ArrayList<>();

    Key(JoinPlan plan) {
      logic = new JoinLogic(plan);
    }

    /** A batch of rows such as "L100" and "R105", in arrival order. */
    List<String> batch(long watermarkMs, String... rows) {
      List<JoinRecord> records = new ArrayList<>();
      for (String r : rows) {
        records.add(record(r));
      }
      return lines(logic.onRows("k", buffer, records, watermarkMs));
    }

    List<String> watermark(long watermarkMs) {
      return lines(logic.onWatermark("k", buffer, watermarkMs));
    }

    List<String> lines(List<JoinEmitted> out) {
      all.addAll(out);
      return JoinLogicTest.lines(out);
    }
  }

  /** {@code L<ms>} or {@code R<ms>}; its row and raw name it, so outputs can be told apart. */
  static JoinRecord record(String r) {
    int side = r.charAt(0) == 'L' ? JoinRecord.LEFT : JoinRecord.RIGHT;
    return new JoinRecord(side, Long.parseLong(r.substring(1)), r, "raw " + r);
  }

  static JoinPlan plan(long lower, long upper, long lateness, boolean leftOuter, long maxRows) {
    return new JoinPlan(lower, upper, lateness, leftOuter, maxRows, "payments", "refunds");
  }

  static List<String> lines(List<JoinEmitted> out) {
    List<String> lines = new ArrayList<>();
    for (JoinEmitted e : out) {
      if (e.isJoined()) {
        assertEquals(e.leftRow, "L" + e.leftTsMs);
        assertTrue(e.rightTsMs == null ? e.rightRow == null
            : e.rightRow.equals("R" + e.rightTsMs));
        lines.add("joined " + e.leftRow + " " + (e.rightRow == null ? "-" : e.rightRow));
      } else {
        assertEquals("k", e.key);
        lines.add(e.reason + " " + e.side + " " + e.raw);
      }
    }
    return lines;
  }

  @Test
  void aPairMatchesWithinTheBoundBothEndsInclusive() {
    Key k = new Key(plan(0, 10, 0, false, 100));
    assertEquals(List.of("joined L100 R100", "joined L100 R110"),
        k.batch(0, "L100", "R99", "R100", "R110", "R111"));
    // from the right's side: lefts in [r - upper, r - lower]
    Key k2 = new Key(plan(0, 10, 0, false, 100));
    assertEquals(List.of("joined L90 R100", "joined L100 R100"),
        k2.batch(0, "R100", "L89", "L90", "L100", "L101"));
  }

  @Test
  void aPairFoundAcrossBatchesIsEmittedOnceInEitherArrivalOrder() {
    Key leftFirst = new Key(plan(0, 10, 50, false, 100));
    assertEquals(List.of(), leftFirst.batch(0, "L100"));
    assertEquals(List.of("joined L100 R105"), leftFirst.batch(50, "R105"));
    assertEquals(List.of(), leftFirst.batch(100, "R200"));
    assertEquals(List.of(), leftFirst.watermark(1000));

    Key rightFirst = new Key(plan(0, 10, 50, false, 100));
    assertEquals(List.of(), rightFirst.batch(0, "R105"));
    assertEquals(List.of("joined L100 R105"), rightFirst.batch(50, "L100"));
    assertEquals(List.of(), rightFirst.batch(100, "L300"));
    assertEquals(List.of(), rightFirst.watermark(1000));
    assertTrue(rightFirst.buffer.holdsNothing());
  }

  @Test
  void aBatchIsAppliedInEventTimeOrderWhateverItsArrivalOrder() {
    Key k = new Key(plan(0, 10, 0, false, 100));
    assertEquals(List.of("joined L100 R100", "joined L100 R104", "joined L102 R104"),
        k.batch(0, "R104", "L102", "R100", "L100"));
  }

  @Test
  void aNegativeLowerBoundMatchesRightRowsBeforeTheLeftRow() {
    Key k = new Key(plan(-5, 5, 0, false, 100));
    assertEquals(List.of("joined L100 R95", "joined L100 R105"),
        k.batch(0, "R94", "R95", "L100", "R105", "R106"));
    // a right row at r is kept until the watermark passes r - lower + L = r + 5: the last left
    // row that can match it is at r + 5
    Key k2 = new Key(plan(-5, -1, 0, false, 100));
    assertEquals(List.of(), k2.batch(0, "R96"));
    assertEquals(102, k2.logic.nextDeadline(k2.buffer)); // 96 + 5 + 0, then + 1
    assertEquals(List.of("joined L100 R96"), k2.batch(100, "L100"));
    assertEquals(List.of("joined L101 R96"), k2.batch(101, "L101"));
    assertEquals(List.of(), k2.watermark(102));
    assertEquals(List.of(), k2.buffer.getRight());
  }

  @Test
  void aRowBeyondTheLatenessIsTooLateAndNamesItsSide() {
    Key k = new Key(plan(0, 86_400_000, 600_000, true, 100));
    List<JoinEmitted> out = k.logic.onRows("k", k.buffer,
        List.of(record("R1000"), record("L100999"), record("L101000")), 701_000);
    assertEquals(List.of("too_late refunds raw R1000", "too_late payments raw L100999"),
        lines(out));
    assertEquals("right (refunds) row at 1000 is 700000 ms behind the watermark 701000, beyond "
        + "allowed_lateness 600000 ms", out.get(0).detail);
    assertEquals("left (payments) row at 100999 is 600001 ms behind the watermark 701000, "
        + "beyond allowed_lateness 600000 ms", out.get(1).detail);
    assertEquals(1000L, out.get(0).eventTsMs);
    // a row exactly at W - L is accepted, though behind the watermark
    assertEquals(List.of(101_000L), times(k.buffer.getLeft()));
  }

  @Test
  void aLeftOuterRowAloneIsEmittedOnlyWhenFreedAndNeverAfterAMatch() {
    Key k = new Key(plan(0, 10, 5, true, 100));
    assertEquals(List.of("joined L200 R205"), k.batch(0, "L100", "L200", "R205"));
    // L100 is kept while W <= 100 + 10 + 5
    assertEquals(List.of(), k.watermark(115));
    assertEquals(List.of("joined L100 -"), k.watermark(116));
    // a late right row within the lateness (308 >= 312 - 5) still matches L300, kept until 315
    assertEquals(List.of(), k.batch(116, "L300"));
    assertEquals(List.of("joined L300 R308"), k.batch(312, "R308"));
    assertEquals(List.of(), k.watermark(1000)); // L200 and L300 matched: nothing alone
    assertTrue(k.buffer.holdsNothing());
    assertEquals(List.of("joined L100 -", "joined L200 R205", "joined L300 R308"),
        sorted(lines(k.all)));
  }

  @Test
  void anInnerJoinEmitsNothingForALeftRowThatNeverMatched() {
    Key k = new Key(plan(0, 10, 5, false, 100));
    assertEquals(List.of(), k.batch(0, "L100"));
    assertEquals(List.of(), k.watermark(116));
    assertTrue(k.buffer.holdsNothing());
  }

  @Test
  void aRowPastTheKeysCapIsDeadLetteredNeitherMatchedNorBuffered() {
    Key k = new Key(plan(0, 10, 0, false, 2));
    List<JoinEmitted> out = k.logic.onRows("k", k.buffer,
        List.of(record("L100"), record("R200"), record("L201")), 0);
    assertEquals(List.of("key_buffer_full payments raw L201"), lines(out));
    assertEquals("the key already buffers the maximum of 2 rows (max_rows_per_key, both sides "
        + "together); this left (payments) row at 201 was neither matched nor buffered",
        out.get(0).detail);
    assertEquals(List.of(100L), times(k.buffer.getLeft()));
    assertEquals(List.of(200L), times(k.buffer.getRight()));
    // a row the watermark has freed makes room before the batch is applied
    assertEquals(List.of("joined L195 R200"), k.batch(111, "L195"));
    assertEquals(List.of(195L), times(k.buffer.getLeft()));
  }

  @Test
  void everyRowIsFreedOnceTheWatermarkPassesItsDeadline() {
    Key k = new Key(plan(-5, 10, 5, false, 100));
    assertEquals(JoinBuffer.NO_TIMER, k.logic.nextDeadline(k.buffer));
    assertEquals(List.of("joined L100 R100"), k.batch(0, "L100", "R100"));
    // left: 100 + 10 + 5 = 115; right: 100 + 5 + 5 = 110; the timer is the first + 1
    assertEquals(115, k.logic.leftDeadline(100));
    assertEquals(110, k.logic.rightDeadline(100));
    assertEquals(111, k.logic.nextDeadline(k.buffer));
    assertEquals(List.of(), k.watermark(110));
    assertEquals(1, k.buffer.getRight().size());
    assertEquals(List.of(), k.watermark(111));
    assertEquals(List.of(), k.buffer.getRight());
    assertEquals(116, k.logic.nextDeadline(k.buffer));
    assertEquals(List.of(), k.watermark(116));
    assertTrue(k.buffer.holdsNothing());
    assertEquals(JoinBuffer.NO_TIMER, k.logic.nextDeadline(k.buffer));
  }

  @Test
  void aRowAcceptedPastItsDeadlineIsFreedInTheSameBatch() {
    // right rows come 10..20 before the left one; W - L = 195: L196 is accepted, but no right
    // row the join still accepts (>= 195) can match it (<= 186), so it is emitted alone now
    Key k = new Key(plan(-20, -10, 5, true, 100));
    assertEquals(List.of("too_late refunds raw R186", "joined L196 -"),
        k.batch(200, "R186", "L196"));
    assertTrue(k.buffer.holdsNothing());
    assertEquals(JoinBuffer.NO_TIMER, k.logic.nextDeadline(k.buffer));
  }

  @Test
  void extremeTimesSaturateInsteadOfWrapping() {
    Key k = new Key(plan(Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, false, 100));
    assertEquals(List.of("joined L0 R" + Long.MAX_VALUE),
        k.batch(0, "L0", "R" + Long.MAX_VALUE));
    assertEquals(Long.MAX_VALUE, k.logic.nextDeadline(k.buffer));
  }

  /**
   * Whatever the batching and the arrival order, the pairs emitted are those a one-shot join of
   * the accepted rows finds, each once, and a left-outer join emits every accepted left row
   * without a match alone, once: checked on random rows, batches and watermarks.
   */
  @Test
  void anyBatchingEmitsExactlyThePairsOfAOneShotJoinOfTheAcceptedRows() {
    Random random = new Random(41);
    for (int round = 0; round < 300; round++) {
      long lower = random.nextInt(41) - 20;
      long upper = lower + random.nextInt(30);
      long lateness = random.nextInt(25);
      Key k = new Key(plan(lower, upper, lateness, true, 1_000));
      List<String> rows = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        rows.add((random.nextBoolean() ? "L" : "R") + random.nextInt(200));
      }
      long watermark = 0;
      List<String> tooLate = new ArrayList<>();
      for (int from = 0; from < rows.size();) {
        int to = Math.min(rows.size(), from + 1 + random.nextInt(6));
        watermark += random.nextInt(15);
        for (String line : k.batch(watermark, rows.subList(from, to).toArray(new String[0]))) {
          if (line.startsWith("too_late")) {
            tooLate.add(line.substring(line.lastIndexOf(' ') + 1));
          } else {
            assertTrue(line.startsWith("joined"), line);
          }
        }
        from = to;
        assertTrue(k.buffer.holdsNothing()
            || k.logic.nextDeadline(k.buffer) > watermark);
      }
      k.watermark(Long.MAX_VALUE);
      assertTrue(k.buffer.holdsNothing());
      List<String> accepted = new ArrayList<>();
      for (String r : rows) {
        if (!tooLate.remove(r)) {
          accepted.add(r);
        }
      }
      List<String> joined = new ArrayList<>();
      for (String line : lines(k.all)) {
        if (line.startsWith("joined")) {
          joined.add(line);
        }
      }
      assertEquals(oneShot(accepted, lower, upper), sorted(joined),
          "round " + round + ": lower " + lower + ", upper " + upper + ", lateness " + lateness);
    }
  }

  /** The left-outer interval join of {@code rows}, all at once, as sorted lines. */
  private static List<String> oneShot(List<String> rows, long lower, long upper) {
    List<String> out = new ArrayList<>();
    for (String l : rows) {
      if (l.charAt(0) != 'L') {
        continue;
      }
      long lt = Long.parseLong(l.substring(1));
      boolean matched = false;
      for (String r : rows) {
        long rt = Long.parseLong(r.substring(1));
        if (r.charAt(0) == 'R' && rt >= lt + lower && rt <= lt + upper) {
          out.add("joined " + l + " " + r);
          matched = true;
        }
      }
      if (!matched) {
        out.add("joined " + l + " -");
      }
    }
    return sorted(out);
  }

  private static List<String> sorted(List<String> lines) {
    List<String> copy = new ArrayList<>(lines);
    copy.sort(null);
    return copy;
  }

  private static List<Long> times(List<Buffered> rows) {
    List<Long> out = new ArrayList<>();
    for (Buffered b : rows) {
      out.add(b.getTsMs());
    }
    return out;
  }
}
