package io.streamwarden.engine.join;

/**
 * One event of either side as the join logic sees it: its side, its event time, its typed
 * fields as a JSON object (what a joined row carries) and the record as received (what its dead
 * letter carries).
 *
 * @param side {@link #LEFT} or {@link #RIGHT}
 * @param tsMs event time in epoch milliseconds
 * @param row the event's typed fields as a JSON object
 * @param raw the record as received
 */
public record JoinRecord(int side, long tsMs, String row, String raw) {
  /** The side code of a left row, in the input's {@code side} column. */
  public static final int LEFT = 0;
  /** The side code of a right row, in the input's {@code side} column. */
  public static final int RIGHT = 1;

  public boolean isLeft() {
    return side == LEFT;
  }
}
