package io.streamwarden.engine.patterns;

import io.streamwarden.engine.EngineInput;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The rows of the pattern operator: its view of the input ({@link EngineInput}'s layout, whose
 * positions are named here as the pattern code reads them) and the one output schema ({@link
 * #SCHEMA}), whose {@code kind} tells a match from a timed-out partial match, a dead letter and
 * an overflow count.
 */
public final class PatternRows {
  /** The {@code reason} of an overflow row (not a dead letter: a count of dropped partials). */
  public static final String PARTIAL_MATCH_CAP = "partial_match_cap";

  public static final StructType SCHEMA = new StructType(new StructField[] {
      field("kind", DataTypes.StringType),
      field("key", DataTypes.StringType),
      field("match_id", DataTypes.StringType),
      field("start_ms", DataTypes.LongType),
      field("end_ms", DataTypes.LongType),
      field("deadline_ms", DataTypes.LongType),
      field("ev_stage", DataTypes.createArrayType(DataTypes.StringType)),
      field("ev_ts_ms", DataTypes.createArrayType(DataTypes.LongType)),
      field("ev_values", DataTypes.createArrayType(
          DataTypes.createArrayType(DataTypes.StringType))),
      field("event_ts_ms", DataTypes.LongType),
      field("raw", DataTypes.StringType),
      field("reason", DataTypes.StringType),
      field("detail", DataTypes.StringType),
      field("dropped", DataTypes.LongType),
  });

  private PatternRows() {}

  private static StructField field(String name, DataType t) {
    return DataTypes.createStructField(name, t, true);
  }

  /** The engine's view of one input row. */
  public static PEvent event(Row r) {
    List<?> values = r.getList(EngineInput.VALUES);
    String[] v = new String[values.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = (String) values.get(i);
    }
    return new PEvent(r.getLong(EngineInput.TS_MS), r.getLong(EngineInput.MASK), v);
  }

  /** The record as the engine saw it, for a dead letter of an event that carried no raw. */
  public static String describe(PatternPlan plan, String key, long tsMs, String[] values) {
    com.fasterxml.jackson.databind.node.ObjectNode n =
        new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
    n.put("key", key);
    n.put("ts_ms", tsMs);
    for (int i = 0; i < values.length && i < plan.fields.size(); i++) {
      n.put(plan.fields.get(i), values[i]);
    }
    return n.toString();
  }

  /** The record a dead letter shows: the input's {@code raw}, or the event as JSON. */
  public static String rawOf(PatternPlan plan, String key, Row r) {
    return r.isNullAt(EngineInput.RAW)
        ? describe(plan, key, r.getLong(EngineInput.TS_MS), event(r).values)
        : r.getString(EngineInput.RAW);
  }

  public static Row deadLetter(String key, Long tsMs, String raw, String reason, String detail) {
    return RowFactory.create("dead_letter", key, null, null, null, null, null, null, null, tsMs,
        raw, reason, detail, null);
  }

  public static Row toRow(PatternPlan plan, String key, Found f) {
    if (f.kind == Found.Kind.OVERFLOW) {
      return RowFactory.create("overflow", key, null, null, null, null, null, null, null, null,
          null, PARTIAL_MATCH_CAP, null, f.dropped);
    }
    Partial p = f.partial;
    List<String> stageNames = new ArrayList<>(p.events.size());
    List<Long> times = new ArrayList<>(p.events.size());
    List<scala.collection.immutable.Seq<String>> values = new ArrayList<>(p.events.size());
    for (int i = 0; i < p.events.size(); i++) {
      stageNames.add(plan.stages.get(p.stageOf[i]).name);
      times.add(p.events.get(i).tsMs);
      values.add(seq(java.util.Arrays.asList(p.events.get(i).values)));
    }
    return RowFactory.create(f.kind == Found.Kind.MATCH ? "match" : "timeout", key,
        matchId(key, p), p.startMs(), p.last().tsMs,
        f.kind == Found.Kind.TIMEOUT ? f.deadlineMs : null, seq(stageNames), seq(times),
        seq(values), null, null, null, null, null);
  }

  /** A deterministic id: FNV-1a over the key and each event's time, stage and position. */
  public static String matchId(String key, Partial p) {
    long h = 0xcbf29ce484222325L;
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ b) * 0x100000001b3L;
    }
    for (int i = 0; i < p.events.size(); i++) {
      h = mix(h, p.events.get(i).tsMs);
      h = mix(h, p.events.get(i).seq);
      h = mix(h, p.stageOf[i]);
    }
    return String.format("%016x", h);
  }

  private static long mix(long h, long v) {
    for (int i = 0; i < 8; i++) {
      h = (h ^ ((v >>> (8 * i)) & 0xff)) * 0x100000001b3L;
    }
    return h;
  }

  private static <T> scala.collection.immutable.Seq<T> seq(List<T> values) {
    return scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq();
  }
}
