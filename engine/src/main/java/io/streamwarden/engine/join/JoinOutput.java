package io.streamwarden.engine.join;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The output schema of the interval join ({@link #schema}); {@code kind} tells a joined row from
 * a dead letter, and Python splits them. Times are epoch milliseconds.
 *
 * <p>Columns, in order: {@code kind, key, left_ts_ms, left_row, right_ts_ms, right_row,
 * event_ts_ms, raw, reason, detail, side}. A joined row fills {@code key} and both sides' time
 * and row (the sides' typed fields as JSON objects; the right side null for a left-outer row that
 * never matched); a dead letter fills {@code key, event_ts_ms, raw, reason, detail} and {@code
 * side}, the source name of its row. A row fills the columns of its kind, null elsewhere.
 */
public final class JoinOutput {
  private JoinOutput() {}

  /** The output schema, the same for every plan. */
  public static StructType schema() {
    return DataTypes.createStructType(List.of(
        field("kind", DataTypes.StringType, false),
        field("key", DataTypes.StringType, true),
        field("left_ts_ms", DataTypes.LongType, true),
        field("left_row", DataTypes.StringType, true),
        field("right_ts_ms", DataTypes.LongType, true),
        field("right_row", DataTypes.StringType, true),
        field("event_ts_ms", DataTypes.LongType, true),
        field("raw", DataTypes.StringType, true),
        field("reason", DataTypes.StringType, true),
        field("detail", DataTypes.StringType, true),
        field("side", DataTypes.StringType, true)));
  }

  private static StructField field(String name, DataType t, boolean nullable) {
    return DataTypes.createStructField(name, t, nullable);
  }

  /** The row of one output of the logic, laid out as {@link #schema}. */
  public static Row toRow(JoinEmitted e) {
    return RowFactory.create(e.kind, e.key, e.leftTsMs, e.leftRow, e.rightTsMs, e.rightRow,
        e.eventTsMs, e.raw, e.reason, e.detail, e.side);
  }
}
