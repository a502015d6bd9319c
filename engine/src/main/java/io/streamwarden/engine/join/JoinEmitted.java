package io.streamwarden.engine.join;

/**
 * One output of the join logic, free of Spark ({@link JoinOutput#toRow} makes it a row): a
 * joined pair, a left row alone (a left-outer join's row that never matched, with the right side
 * null), or a dead letter of an arriving row.
 */
public final class JoinEmitted {
  public static final String JOINED = "joined";
  public static final String DEAD_LETTER = "dead_letter";

  public final String kind;
  public final String key;
  public final Long leftTsMs;
  public final String leftRow;
  public final Long rightTsMs;
  public final String rightRow;
  public final Long eventTsMs;
  public final String raw;
  public final String reason;
  public final String detail;
  /** A dead letter's source name (the plan's left or right name). */
  public final String side;

  private JoinEmitted(String kind, String key, Long leftTsMs, String leftRow, Long rightTsMs,
      String rightRow, Long eventTsMs, String raw, String reason, String detail, String side) {
    this.kind = kind;
    this.key = key;
    this.leftTsMs = leftTsMs;
    this.leftRow = leftRow;
    this.rightTsMs = rightTsMs;
    this.rightRow = rightRow;
    this.eventTsMs = eventTsMs;
    this.raw = raw;
    this.reason = reason;
    this.detail = detail;
    this.side = side;
  }

  /** A matched pair. */
  public static JoinEmitted pair(String key, Buffered left, Buffered right) {
    return new JoinEmitted(JOINED, key, left.getTsMs(), left.getRow(), right.getTsMs(),
        right.getRow(), null, null, null, null, null);
  }

  /** A left row that never matched, emitted alone by a left-outer join once it is freed. */
  public static JoinEmitted leftAlone(String key, Buffered left) {
    return new JoinEmitted(JOINED, key, left.getTsMs(), left.getRow(), null, null, null, null,
        null, null, null);
  }

  /** A dead letter: {@code sideName} is the row's source name, or null if unknown. */
  public static JoinEmitted deadLetter(String key, Long eventTsMs, String raw, String reason,
      String detail, String sideName) {
    return new JoinEmitted(DEAD_LETTER, key, null, null, null, null, eventTsMs, raw, reason,
        detail, sideName);
  }

  public boolean isJoined() {
    return JOINED.equals(kind);
  }
}
