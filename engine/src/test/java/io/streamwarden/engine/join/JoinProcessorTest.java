package io.streamwarden.engine.join;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.Poison;
import io.streamwarden.engine.testing.ProcessorDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The real {@link JoinProcessor} under {@link ProcessorDriver}: input rows laid out as {@link
 * EngineInput#joinColumns} in, rows of {@link JoinOutput#schema} out, state and timers per key.
 */
class JoinProcessorTest {
  private static final StructType SCHEMA = JoinOutput.schema();
  private static final String TICK = EngineInput.TICK_KEY;

  @AfterEach
  void noMoreFaults() {
    Poison.failOn(null);
  }

  /** Bound [0, 10], lateness 5, left outer, at most 100 rows a key. */
  private static ProcessorDriver driver() {
    return new ProcessorDriver(new JoinProcessor(
        new JoinPlan(0, 10, 5, true, 100, "payments", "refunds"), 0));
  }

  @Test
  void rowsAreJoinedRejectsPassThroughAndTimersFreeEveryKey() {
    ProcessorDriver driver = driver();
    List<String> first = describe(driver.runBatch(batch(
        event("p1", JoinRecord.LEFT, 100), event("p1", JoinRecord.RIGHT, 105),
        event("p2", JoinRecord.LEFT, 100),
        rejected(3, JoinRecord.RIGHT, "p9"), tick()), 0));
    assertEquals(List.of("dead_letter p9 refunds schema_mismatch 50 {bad",
        "joined p1 100 {\"at\":100,\"side\":0} 105 {\"at\":105,\"side\":1}"), first);
    // p1: the right row is freed first (105 + 5 + 1), p2: its left row at 100 + 10 + 5 + 1
    assertEquals(List.of(111L), driver.handle().timersOf("p1"));
    assertEquals(List.of(116L), driver.handle().timersOf("p2"));
    assertEquals(2, driver.handle().all(JoinProcessor.STATE_NAME).size());

    // an idle tick moves the watermark: the timers free everything; p2's row never matched
    List<String> second = describe(driver.runBatch(batch(tick()), 200));
    assertEquals(List.of("joined p2 100 {\"at\":100,\"side\":0} null null"), second);
    assertTrue(driver.handle().all(JoinProcessor.STATE_NAME).isEmpty());
    assertTrue(driver.handle().expired(Long.MAX_VALUE).isEmpty());
  }

  @Test
  void aTimerFiringEarlyFreesWhatIsDueAndKeepsOneTimerAtTheNext() {
    ProcessorDriver driver = driver();
    driver.runBatch(batch(event("p1", JoinRecord.LEFT, 100), event("p1", JoinRecord.RIGHT,
        105)), 0);
    assertEquals(List.of(), describe(driver.runBatch(batch(), 111))); // frees the right row
    assertEquals(List.of(116L), driver.handle().timersOf("p1"));
    JoinBuffer held = (JoinBuffer) driver.handle().peek(JoinProcessor.STATE_NAME, "p1");
    assertEquals(1, held.getLeft().size());
    assertTrue(held.getLeft().get(0).isMatched());
    assertEquals(List.of(), held.getRight());
    assertEquals(List.of(), describe(driver.runBatch(batch(), 116))); // matched: not alone
    assertTrue(driver.handle().all(JoinProcessor.STATE_NAME).isEmpty());
  }

  @Test
  void aKeyWhoseRowsThrowIsPoisonWithoutChangingItsState() {
    ProcessorDriver driver = driver();
    driver.runBatch(batch(event("p1", JoinRecord.LEFT, 100)), 0);
    Poison.failOn("BOOM");
    Row bad = event("p1", JoinRecord.RIGHT, 105, "BOOM");
    List<Row> out = driver.runBatch(batch(bad, event("p1", JoinRecord.RIGHT, 106)), 0);
    assertEquals(List.of("dead_letter p1 refunds poison 105 BOOM",
        "dead_letter p1 refunds poison 106 raw R106"), describe(out));
    String detail = (String) out.get(0).get(SCHEMA.fieldIndex("detail"));
    assertTrue(detail.startsWith("the join engine threw io.streamwarden.engine.Poison$"
        + "InjectedFault: injected fault for a record containing 'BOOM'"), detail);
    Poison.failOn(null);
    // the left row is still buffered, unmatched: a later right row finds it
    assertEquals(List.of("joined p1 100 {\"at\":100,\"side\":0} 107 {\"at\":107,\"side\":1}"),
        describe(driver.runBatch(batch(event("p1", JoinRecord.RIGHT, 107)), 0)));
  }

  @Test
  void aRowThatCannotBeReadIsPoisonAlone() {
    ProcessorDriver driver = driver();
    Object[] noSide = values(event("p1", JoinRecord.RIGHT, 105));
    noSide[EngineInput.JOIN_SIDE] = null;
    List<Row> out = driver.runBatch(batch(RowFactory.create(noSide),
        event("p1", JoinRecord.LEFT, 100), event("p1", JoinRecord.RIGHT, 106)), 0);
    assertEquals(List.of("dead_letter p1 null poison 105 raw R105",
        "joined p1 100 {\"at\":100,\"side\":0} 106 {\"at\":106,\"side\":1}"), describe(out));
    assertTrue(((String) out.get(0).get(SCHEMA.fieldIndex("detail"))).startsWith(
        "the join engine, reading the record, threw java.lang.IllegalArgumentException: an "
            + "event row without its event time or side"));
  }

  @Test
  void theInputColumnsAreTheCommonOnesThenSideAndRow() {
    assertEquals(List.of("key", "kind", "ts_ms", "raw", "reason", "detail", "user", "side",
        "row"), EngineInput.joinColumns());
    assertEquals(List.of("kind", "key", "left_ts_ms", "left_row", "right_ts_ms", "right_row",
        "event_ts_ms", "raw", "reason", "detail", "side"), List.of(SCHEMA.fieldNames()));
    assertTrue(EngineInput.contractJson().contains("\"join\":[\"key\",\"kind\",\"ts_ms\","
        + "\"raw\",\"reason\",\"detail\",\"user\",\"side\",\"row\"]"));
  }

  private static Row event(String key, int side, long tsMs) {
    return event(key, side, tsMs, "raw " + (side == JoinRecord.LEFT ? "L" : "R") + tsMs);
  }

  private static Row event(String key, int side, long tsMs, String raw) {
    Object[] row = new Object[EngineInput.joinColumns().size()];
    row[EngineInput.KEY] = key;
    row[EngineInput.KIND] = EngineInput.KIND_EVENT;
    row[EngineInput.TS_MS] = tsMs;
    row[EngineInput.RAW] = raw;
    row[EngineInput.USER] = key;
    row[EngineInput.JOIN_SIDE] = side;
    row[EngineInput.JOIN_ROW] = "{\"at\":" + tsMs + ",\"side\":" + side + "}";
    return RowFactory.create(row);
  }

  private static Row rejected(int spread, int side, String user) {
    Object[] row = new Object[EngineInput.joinColumns().size()];
    row[EngineInput.KEY] = EngineInput.REJECTED_KEY_PREFIX + spread;
    row[EngineInput.KIND] = EngineInput.KIND_REJECTED;
    row[EngineInput.TS_MS] = 50L;
    row[EngineInput.RAW] = "{bad";
    row[EngineInput.REASON] = "schema_mismatch";
    row[EngineInput.DETAIL] = "not JSON";
    row[EngineInput.USER] = user;
    row[EngineInput.JOIN_SIDE] = side;
    return RowFactory.create(row);
  }

  private static Row tick() {
    Object[] row = new Object[EngineInput.joinColumns().size()];
    row[EngineInput.KEY] = TICK;
    row[EngineInput.KIND] = EngineInput.KIND_TICK;
    return RowFactory.create(row);
  }

  private static Object[] values(Row r) {
    Object[] out = new Object[r.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = r.get(i);
    }
    return out;
  }

  private static SortedMap<String, List<Row>> batch(Row... rows) {
    SortedMap<String, List<Row>> byKey = new TreeMap<>();
    for (Row r : rows) {
      byKey.computeIfAbsent(r.getString(EngineInput.KEY), k -> new ArrayList<>()).add(r);
    }
    return byKey;
  }

  /**
   * {@code joined <key> <left_ts> <left_row> <right_ts> <right_row>} or {@code dead_letter
   * <key> <side> <reason> <event_ts> <raw>}.
   */
  private static List<String> describe(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      String kind = (String) r.get(SCHEMA.fieldIndex("kind"));
      List<String> fields = "joined".equals(kind)
          ? List.of("key", "left_ts_ms", "left_row", "right_ts_ms", "right_row")
          : List.of("key", "side", "reason", "event_ts_ms", "raw");
      StringBuilder line = new StringBuilder(kind);
      for (String f : fields) {
        line.append(' ').append(r.get(SCHEMA.fieldIndex(f)));
      }
      out.add(line.toString());
    }
    return out;
  }
}
