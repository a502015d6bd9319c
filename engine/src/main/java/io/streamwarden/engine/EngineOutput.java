package io.streamwarden.engine;

import io.streamwarden.engine.sessions.AggregatePlan;
import io.streamwarden.engine.sessions.SessionPlan;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The output schema of the session engine, which depends on the plan's aggregates ({@link
 * #schema}): {@code kind} tells a session revision from a dead letter and from a late event
 * bound for the history store ({@code history}, with the event's payload in {@code event_*}),
 * and Python splits them. Times are epoch milliseconds.
 *
 * <p>Columns, in order: {@code kind, key, session_id, start_ms, end_ms, event_count, bytes,
 * revision, truncated, merged_session_ids}, then one {@code agg_i} per aggregate, then {@code
 * state} (base64 of the session's encoded aggregates, on session rows when the plan keeps
 * state), {@code event_ts_ms, raw, reason, detail, event_size} and {@code event_values} (a
 * history event's input values as a JSON array). A row fills the columns of its kind, null
 * elsewhere.
 */
public final class EngineOutput {
  /** Columns before the aggregates. */
  private static final int FIXED = 10;
  /** Columns after the aggregates. */
  private static final int TAIL = 7;
  private static final int STATE = 0;
  private static final int EVENT_TS_MS = 1;
  private static final int RAW = 2;
  private static final int REASON = 3;
  private static final int DETAIL = 4;
  private static final int EVENT_SIZE = 5;
  private static final int EVENT_VALUES = 6;

  private EngineOutput() {}

  /** The output schema of a plan. */
  public static StructType schema(SessionPlan plan) {
    return schema(plan.aggregates);
  }

  /**
   * The output schema of an operator whose summaries carry {@code aggs}: sessions, and windows
   * (a window is a summary whose start and end are the window's, its id the {@code session_id}).
   */
  public static StructType schema(AggregatePlan aggs) {
    List<StructField> fields = new ArrayList<>();
    fields.add(field("kind", DataTypes.StringType, false));
    fields.add(field("key", DataTypes.StringType, true));
    fields.add(field("session_id", DataTypes.StringType, true));
    fields.add(field("start_ms", DataTypes.LongType, true));
    fields.add(field("end_ms", DataTypes.LongType, true));
    fields.add(field("event_count", DataTypes.LongType, true));
    fields.add(field("bytes", DataTypes.LongType, true));
    fields.add(field("revision", DataTypes.IntegerType, true));
    fields.add(field("truncated", DataTypes.BooleanType, true));
    fields.add(field("merged_session_ids", DataTypes.createArrayType(DataTypes.StringType), true));
    for (int i = 0; i < aggs.size(); i++) {
      fields.add(field(aggregateColumn(i), aggs.resultType(i), true));
    }
    fields.add(field("state", DataTypes.StringType, true));
    fields.add(field("event_ts_ms", DataTypes.LongType, true));
    fields.add(field("raw", DataTypes.StringType, true));
    fields.add(field("reason", DataTypes.StringType, true));
    fields.add(field("detail", DataTypes.StringType, true));
    fields.add(field("event_size", DataTypes.LongType, true));
    fields.add(field("event_values", DataTypes.StringType, true));
    return DataTypes.createStructType(fields);
  }

  /** {@link #schema} of the plan given as JSON, as {@link StructType#json()}, for Python. */
  public static String schemaJson(String planJson) {
    return schema(SessionPlan.fromJson(planJson)).json();
  }

  /** The column of aggregate {@code i}: agg_i. */
  public static String aggregateColumn(int i) {
    return "agg_" + i;
  }

  private static StructField field(String name, DataType t, boolean nullable) {
    return DataTypes.createStructField(name, t, nullable);
  }

  /**
   * A session revision.
   *
   * @param aggregates the results in plan order: boxed values, or lists for the collecting
   *     functions
   * @param state the encoded aggregates in base64, or null
   */
  public static Row session(AggregatePlan plan, String key, String sessionId, long startMs,
      long endMs, long eventCount, long bytes, int revision, boolean truncated,
      List<String> mergedIds, Object[] aggregates, String state) {
    Object[] row = sized(plan);
    row[0] = "session";
    row[1] = key;
    row[2] = sessionId;
    row[3] = startMs;
    row[4] = endMs;
    row[5] = eventCount;
    row[6] = bytes;
    row[7] = revision;
    row[8] = truncated;
    row[9] = mergedIds == null ? null : scalaSeq(mergedIds);
    for (int i = 0; i < aggregates.length; i++) {
      row[FIXED + i] = aggregates[i] instanceof List<?> list ? scalaSeq(list) : aggregates[i];
    }
    row[tail(plan) + STATE] = state;
    return RowFactory.create(row);
  }

  /** A late event for the history store: its key, time, raw record and payload. */
  public static Row history(AggregatePlan plan, String key, long eventTsMs, String raw, long size,
      String eventValues) {
    Object[] row = sized(plan);
    row[0] = "history";
    row[1] = key;
    int tail = tail(plan);
    row[tail + EVENT_TS_MS] = eventTsMs;
    row[tail + RAW] = raw;
    row[tail + EVENT_SIZE] = size;
    row[tail + EVENT_VALUES] = eventValues;
    return RowFactory.create(row);
  }

  public static Row deadLetter(AggregatePlan plan, String key, Long eventTsMs, String raw,
      String reason, String detail) {
    Object[] row = sized(plan);
    row[0] = "dead_letter";
    row[1] = key;
    int tail = tail(plan);
    row[tail + EVENT_TS_MS] = eventTsMs;
    row[tail + RAW] = raw;
    row[tail + REASON] = reason;
    row[tail + DETAIL] = detail;
    return RowFactory.create(row);
  }

  private static Object[] sized(AggregatePlan plan) {
    return new Object[FIXED + plan.size() + TAIL];
  }

  private static int tail(AggregatePlan plan) {
    return FIXED + plan.size();
  }

  private static <T> scala.collection.immutable.Seq<T> scalaSeq(List<T> values) {
    return scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq();
  }
}
