package io.streamwarden.engine;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import scala.collection.Iterator;

/**
 * The column layout every engine operator reads; Python's {@code engine_input} builds it.
 *
 * <p>Rows with a control key (starting with NUL) are not events: rejected records that
 * validation already dead-lettered, spread over a few keys, and idle ticks, whose only job is to
 * move the watermark. Neither touches state.
 */
public final class EngineInput {
  public static final int KEY = 0;
  public static final int KIND = 1;
  public static final int TS_MS = 2;
  public static final int PAGE = 3;
  public static final int URL = 4;
  public static final int SIZE = 5;
  public static final int RAW = 6;
  public static final int REASON = 7;
  public static final int DETAIL = 8;
  /** The parsed user id of a rejected record, when it had one. */
  public static final int USER = 9;

  public static final int KIND_EVENT = 0;
  public static final int KIND_REJECTED = 1;
  public static final int KIND_TICK = 2;

  private EngineInput() {}

  public static boolean isControlKey(String key) {
    return key != null && !key.isEmpty() && key.charAt(0) == '\u0000';
  }

  /** Dead letters for rejected rows; nothing for ticks. */
  public static List<Row> passThrough(Iterator<Row> rows) {
    List<Row> out = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      if (r.getInt(KIND) == KIND_REJECTED) {
        out.add(EngineOutput.deadLetter(r.getString(USER), r.isNullAt(TS_MS) ? null : r.getLong(TS_MS),
            r.getString(RAW), r.getString(REASON), r.getString(DETAIL)));
      }
    }
    return out;
  }
}
