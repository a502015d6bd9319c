package io.streamwarden.engine.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
import io.streamwarden.engine.Poison;
import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.SessionProcessor;
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
 * No record can fail a batch: a record the session engine throws on is a {@code poison} dead
 * letter with the exception, the key's other records are applied without it, and every record
 * ends in one place.
 */
class PoisonTest {
  private static final long MIN = 60_000L;
  private static final StructType SCHEMA =
      EngineOutput.schema(new SessionPlan(30 * MIN, 0, 100, 1 << 20));

  @AfterEach
  void noMoreFaults() {
    Poison.failOn(null);
  }

  private static ProcessorDriver driver() {
    return new ProcessorDriver(
        new SessionProcessor(new SessionPlan(30 * MIN, 0, 100, 1 << 20), 0));
  }

  @Test
  void theRecordThatThrowsIsPoisonAndTheKeysOtherRecordsStillMakeTheirSession() {
    Poison.failOn("BOOM");
    ProcessorDriver driver = driver();
    List<Row> first = driver.runBatch(batch(event("a", MIN, "ok-1"), event("a", 2 * MIN, "BOOM"),
        event("a", 3 * MIN, "ok-2"), event("b", MIN, "ok-b")), 0);
    assertEquals(1, first.size());
    Row poison = first.get(0);
    assertEquals("dead_letter", get(poison, "kind"));
    assertEquals("poison", get(poison, "reason"));
    assertEquals("BOOM", get(poison, "raw"));
    assertEquals("a", get(poison, "key"));
    assertEquals(2 * MIN, get(poison, "event_ts_ms"));
    String detail = (String) get(poison, "detail");
    assertTrue(detail.startsWith("the session engine threw io.streamwarden.engine.Poison$"
        + "InjectedFault: injected fault for a record containing 'BOOM'; "), detail);
    // the failed attempt changed a's state only in memory: the session holds the other two
    List<String> closed = describe(driver.runBatch(batch(), 60 * MIN));
    assertEquals(List.of("session b 1", "session a 2"), closed); // by deadline: b is due first
  }

  @Test
  void aRecordTheEngineCannotReadIsPoisonToo() {
    Object[] values = InputRow.sizedFor(EngineInput.KEY, EngineInput.KIND, EngineInput.TS_MS,
        EngineInput.SIZE, EngineInput.RAW, EngineInput.REASON, EngineInput.DETAIL,
        EngineInput.USER);
    values[EngineInput.KEY] = "a";
    values[EngineInput.KIND] = EngineInput.KIND_EVENT;
    values[EngineInput.RAW] = "no time";
    Row noTime = RowFactory.create(values); // TS_MS, SIZE null: getLong throws
    List<String> out = describe(driver().runBatch(batch(noTime, event("a", MIN, "ok")), 0));
    assertEquals(List.of("dead_letter a poison"), out);
  }

  @Test
  void withoutAFaultNothingIsPoison() {
    ProcessorDriver driver = driver();
    assertEquals(List.of(), driver.runBatch(batch(event("a", MIN, "BOOM")), 0));
    assertEquals(List.of("session a 1"), describe(driver.runBatch(batch(), 60 * MIN)));
  }

  private static Row event(String key, long tsMs, String raw) {
    return SessionHarness.eventRow(key,
        RowJson.JSON.createObjectNode().put("ts_ms", tsMs).put("raw", raw));
  }

  private static Object get(Row r, String column) {
    return r.get(SCHEMA.fieldIndex(column));
  }

  private static SortedMap<String, List<Row>> batch(Row... rows) {
    SortedMap<String, List<Row>> byKey = new TreeMap<>();
    for (Row r : rows) {
      byKey.computeIfAbsent(r.getString(EngineInput.KEY), k -> new ArrayList<>()).add(r);
    }
    return byKey;
  }

  /** {@code session <key> <events>} or {@code dead_letter <key> <reason>}. */
  private static List<String> describe(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      String kind = (String) get(r, "kind");
      out.add(kind + " " + get(r, "key") + " "
          + get(r, "session".equals(kind) ? "event_count" : "reason"));
    }
    return out;
  }
}
