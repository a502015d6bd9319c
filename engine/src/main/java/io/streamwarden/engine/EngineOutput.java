package io.streamwarden.engine;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The one output schema of the session engine: {@code kind} tells a session revision from a
 * dead letter and from a late event bound for the history store ({@code history}, with the
 * event's payload in {@code event_*}), and Python splits them. Times are epoch milliseconds.
 * {@code url_times} (the time of each of {@code urls}) is what a stored session needs to merge
 * urls in order later; the sessions output leaves it out.
 */
public final class EngineOutput {
  public static final StructType SCHEMA = new StructType(new StructField[] {
      field("kind", DataTypes.StringType, false),
      field("user_id", DataTypes.StringType, true),
      field("session_id", DataTypes.StringType, true),
      field("start_ms", DataTypes.LongType, true),
      field("end_ms", DataTypes.LongType, true),
      field("page_count", DataTypes.LongType, true),
      field("bytes", DataTypes.LongType, true),
      field("first_url", DataTypes.StringType, true),
      field("last_url", DataTypes.StringType, true),
      field("urls", DataTypes.createArrayType(DataTypes.StringType), true),
      field("revision", DataTypes.IntegerType, true),
      field("truncated", DataTypes.BooleanType, true),
      field("merged_session_ids", DataTypes.createArrayType(DataTypes.StringType), true),
      field("event_ts_ms", DataTypes.LongType, true),
      field("raw", DataTypes.StringType, true),
      field("reason", DataTypes.StringType, true),
      field("detail", DataTypes.StringType, true),
      field("url_times", DataTypes.createArrayType(DataTypes.LongType), true),
      field("event_page", DataTypes.LongType, true),
      field("event_url", DataTypes.StringType, true),
      field("event_size", DataTypes.LongType, true),
  });

  private EngineOutput() {}

  private static StructField field(String name, org.apache.spark.sql.types.DataType t,
      boolean nullable) {
    return DataTypes.createStructField(name, t, nullable);
  }

  public static Row session(String userId, String sessionId, long startMs, long endMs,
      long pageCount, long bytes, String firstUrl, String lastUrl, List<String> urls,
      List<Long> urlTimes, int revision, boolean truncated, List<String> mergedIds) {
    return RowFactory.create("session", userId, sessionId, startMs, endMs, pageCount, bytes,
        firstUrl, lastUrl, urls == null ? null : scalaSeq(urls), revision, truncated,
        mergedIds == null ? null : scalaSeq(mergedIds), null, null, null, null,
        urlTimes == null ? null : scalaSeq(urlTimes), null, null, null);
  }

  /** A late event for the history store: its user, time, raw record and payload. */
  public static Row history(String userId, long eventTsMs, String raw, long page, String url,
      long size) {
    return RowFactory.create("history", userId, null, null, null, null, null, null, null, null,
        null, null, null, eventTsMs, raw, null, null, null, page, url, size);
  }

  public static Row deadLetter(String userId, Long eventTsMs, String raw, String reason,
      String detail) {
    return RowFactory.create("dead_letter", userId, null, null, null, null, null, null, null,
        null, null, null, null, eventTsMs, raw, reason, detail, null, null, null, null);
  }

  private static <T> scala.collection.immutable.Seq<T> scalaSeq(List<T> values) {
    return scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq();
  }
}
