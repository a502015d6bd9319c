package io.streamwarden.engine;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The one output schema of the session engine: {@code kind} tells a session revision from a
 * dead letter, and Python splits the two. Times are epoch milliseconds.
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
  });

  private EngineOutput() {}

  private static StructField field(String name, org.apache.spark.sql.types.DataType t,
      boolean nullable) {
    return DataTypes.createStructField(name, t, nullable);
  }

  public static Row session(String userId, String sessionId, long startMs, long endMs,
      long pageCount, long bytes, String firstUrl, String lastUrl, List<String> urls,
      int revision, boolean truncated, List<String> mergedIds) {
    return RowFactory.create("session", userId, sessionId, startMs, endMs, pageCount, bytes,
        firstUrl, lastUrl, urls == null ? null : scalaSeq(urls), revision, truncated,
        mergedIds == null ? null : scalaSeq(mergedIds), null, null, null, null);
  }

  public static Row deadLetter(String userId, Long eventTsMs, String raw, String reason,
      String detail) {
    return RowFactory.create("dead_letter", userId, null, null, null, null, null, null, null,
        null, null, null, null, eventTsMs, raw, reason, detail);
  }

  private static scala.collection.immutable.Seq<String> scalaSeq(List<String> values) {
    return scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq();
  }
}
