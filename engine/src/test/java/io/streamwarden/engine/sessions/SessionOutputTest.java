package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
import io.streamwarden.engine.testing.ProcessorDriver;
import io.streamwarden.engine.testing.SessionHarness;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * The engine's side of the seam with Python: input columns and reasons, the output schema a
 * plan gives, and rows out of the real processor (through {@link SessionHarness}, the JSON
 * Python's SessionTester speaks).
 */
class SessionOutputTest {
  private static final String PLAN = SessionTestUtilities.planJson(30, 0, 100, 1_000_000,
      "[\"double\", \"string\", \"long\", \"boolean\"]",
      "[{\"function\": \"sum\", \"input\": 0}, {\"function\": \"count\"},"
          + " {\"function\": \"collect_list\", \"input\": 1}, {\"function\": \"avg\", \"input\": 2},"
          + " {\"function\": \"max\", \"input\": 3}, {\"function\": \"count_distinct\", \"input\": 1}]");

  private static String withKeepState(String plan) {
    return SessionTestUtilities.withFields(plan, "\"keep_state\": true");
  }

  /** {@link #PLAN} with a minute of allowed lateness, a day of history lateness, its state. */
  private static String withHistory(String plan) {
    return withKeepState(plan.replace("\"allowed_lateness_ms\": 0,",
        "\"allowed_lateness_ms\": 60000, \"history_lateness_ms\": 86400000,"));
  }

  @Test
  void theSessionInputIsTheCommonColumnsThenSizeThenTheValues() {
    assertEquals(List.of("key", "kind", "ts_ms", "raw", "reason", "detail", "user", "size"),
        EngineInput.sessionColumns());
    assertEquals(EngineInput.sessionColumns().size(), EngineInput.SESSION_VALUES);
    assertEquals("value_2", EngineInput.sessionValueColumn(2));
    String contract = EngineInput.contractJson();
    assertTrue(contract.contains("\"SESSION_EVENT_CAP\":\"session_event_cap\""), contract);
    assertTrue(!contract.contains("page"), contract);
  }

  @Test
  void theOutputSchemaHasTheFixedColumnsTheAggregatesThenTheEventColumns() {
    StructType schema = EngineOutput.schema(SessionPlan.fromJson(PLAN));
    List<String> names = new ArrayList<>();
    List<DataType> types = new ArrayList<>();
    for (StructField f : schema.fields()) {
      names.add(f.name());
      types.add(f.dataType());
    }
    assertEquals(List.of("kind", "key", "session_id", "start_ms", "end_ms", "event_count",
        "bytes", "revision", "truncated", "merged_session_ids", "agg_0", "agg_1", "agg_2",
        "agg_3", "agg_4", "agg_5", "state", "event_ts_ms", "raw", "reason", "detail",
        "event_size", "event_values"), names);
    assertEquals(List.of(DataTypes.DoubleType, DataTypes.LongType,
        DataTypes.createArrayType(DataTypes.StringType, false), DataTypes.DoubleType,
        DataTypes.BooleanType, DataTypes.LongType), types.subList(10, 16));
    assertEquals(schema, DataType.fromJson(EngineOutput.schemaJson(PLAN)));
    assertEquals(17, EngineOutput.schema(SessionPlan.fromJson(
        SessionTestUtilities.planJson(30, 0, 1, 1, "[]", "[]"))).size());
  }

  @Test
  void theHarnessRunsTheProcessorOnTypedValuesAndAnswersRowsByColumnName() throws Exception {
    SessionHarness harness = new SessionHarness(PLAN);
    assertEquals("[]", harness.runBatch("[{\"key\": \"u\", \"ts_ms\": 0, \"size\": 20, "
        + "\"raw\": \"r0\", \"values\": [0.1, \"a\", 3, true]}, {\"key\": \"u\", \"ts_ms\": "
        + MIN + ", \"size\": 30, \"raw\": \"r1\", \"values\": [0.2, null, 4, false]}]", 0));
    JsonNode rows = SessionTestUtilities.json(harness.runBatch("[]", 60 * MIN));
    assertEquals(1, rows.size());
    JsonNode r = rows.get(0);
    assertEquals("session", r.get("kind").asText());
    assertEquals("u", r.get("key").asText());
    assertEquals(2, r.get("event_count").asLong());
    assertEquals(50, r.get("bytes").asLong());
    assertEquals(0.30000000000000004, r.get("agg_0").asDouble()); // 0.1 + 0.2, rounded once
    assertEquals(2, r.get("agg_1").asLong());
    assertEquals("[\"a\"]", r.get("agg_2").toString());
    assertEquals(3.5, r.get("agg_3").asDouble());
    assertTrue(r.get("agg_4").asBoolean());
    assertEquals(1, r.get("agg_5").asLong());
    assertTrue(r.get("state").isNull(), "no state unless the plan keeps it");
    assertEquals(0, harness.stateRows());
  }

  @Test
  void aKeptStateIsTheBase64OfTheSessionsEncodedAggregates() throws Exception {
    SessionHarness harness = new SessionHarness(withKeepState(PLAN));
    harness.runBatch("[{\"key\": \"u\", \"ts_ms\": 0, \"values\": [1.5, \"a\", 3, true]}]", 0);
    JsonNode peeked = SessionTestUtilities.json(harness.peek("u"));
    String stored = peeked.get("sessions").get(0).get("aggregates").asText();
    JsonNode row = SessionTestUtilities.json(harness.runBatch("[]", 60 * MIN)).get(0);
    assertEquals(stored, row.get("state").asText());
    byte[] state = Base64.getDecoder().decode(row.get("state").asText());
    assertEquals(AggregatePlan.FORMAT_VERSION, state[0]);
    Accumulator[] back = SessionPlan.fromJson(PLAN).aggregates.decode(state);
    assertEquals(Arrays.asList(1.5, 1L, List.of("a"), 3.0, true, 1L),
        Arrays.asList(AggregatePlan.results(back)));
  }

  @Test
  void aHistoryRowCarriesTheEventsValuesAsJsonThatReadsBackExactly() throws Exception {
    SessionHarness harness = new SessionHarness(withHistory(PLAN));
    JsonNode rows = SessionTestUtilities.json(harness.runBatch("[{\"key\": \"u\", \"ts_ms\": "
        + 600 * MIN + ", \"values\": [null, null, null, null]}, {\"key\": \"u\", \"ts_ms\": "
        + 100 * MIN + ", \"size\": 7, \"raw\": \"late\", \"values\": [0.1, \"\\u00e9\", "
        + "9007199254740993, null]}]", 600 * MIN));
    assertEquals(1, rows.size());
    JsonNode h = rows.get(0);
    assertEquals("history", h.get("kind").asText());
    assertEquals(100 * MIN, h.get("event_ts_ms").asLong());
    assertEquals(7, h.get("event_size").asLong());
    assertEquals("late", h.get("raw").asText());
    String values = h.get("event_values").asText();
    assertEquals("[0.1,\"\u00e9\",9007199254740993,null]", values);
    Object[] back = ValuesJson.read(SessionTestUtilities.json(values),
        SessionPlan.fromJson(PLAN).aggregates);
    assertEquals(Arrays.asList(0.1, "\u00e9", 9007199254740993L, null), Arrays.asList(back));
  }

  @Test
  void anEventThatMakesAnAggregateThrowIsPoisonAndTheOthersStillCount() throws Exception {
    SessionHarness harness = new SessionHarness(SessionTestUtilities.planJson(30, 0, 100,
        1_000_000, "[\"long\"]", "[{\"function\": \"sum\", \"input\": 0}]"));
    harness.runBatch("[{\"key\": \"u\", \"ts_ms\": 0, \"raw\": \"big\", \"values\": ["
        + Long.MAX_VALUE + "]}]", 0);
    JsonNode rows = SessionTestUtilities.json(harness.runBatch("[{\"key\": \"u\", \"ts_ms\": "
        + MIN + ", \"raw\": \"one\", \"values\": [1]}]", 0));
    assertEquals(1, rows.size());
    assertEquals("poison", rows.get(0).get("reason").asText());
    assertEquals("one", rows.get(0).get("raw").asText());
    assertTrue(rows.get(0).get("detail").asText().contains("long overflow"));
    JsonNode session = SessionTestUtilities.json(harness.runBatch("[]", 60 * MIN)).get(0);
    assertEquals(Long.MAX_VALUE, session.get("agg_0").asLong());
  }

  @Test
  void aValueOfAnotherKindThanThePlanSaysIsPoisonWhenRead() {
    SessionPlan plan = SessionPlan.fromJson(PLAN);
    ProcessorDriver driver = new ProcessorDriver(new SessionProcessor(plan, 0));
    Object[] row = new Object[EngineInput.SESSION_VALUES + 4];
    row[EngineInput.KEY] = "u";
    row[EngineInput.KIND] = EngineInput.KIND_EVENT;
    row[EngineInput.TS_MS] = 0L;
    row[EngineInput.SIZE] = 10L;
    row[EngineInput.RAW] = "r";
    row[EngineInput.SESSION_VALUES] = "0.5"; // a string where the plan says double
    List<Row> out = driver.runBatch(new TreeMap<>(Map.of("u", List.of(RowFactory.create(row)))),
        0);
    StructType schema = EngineOutput.schema(plan);
    assertEquals(1, out.size());
    assertEquals("poison", out.get(0).getString(schema.fieldIndex("reason")));
    String detail = out.get(0).getString(schema.fieldIndex("detail"));
    assertTrue(detail.contains("value_0 is a String, the plan says double"), detail);
  }
}
