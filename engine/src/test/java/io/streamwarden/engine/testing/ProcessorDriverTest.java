package io.streamwarden.engine.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.SessionProcessor;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * The in-memory handle and the driver the testers run the real processors with: state and
 * timers per key, and transformWithState's order (input rows, then timers by time and key).
 */
class ProcessorDriverTest {
  private static final long MIN = 60_000L;
  private static final StructType SCHEMA =
      EngineOutput.schema(new SessionPlan(30 * MIN, 0, 100, 1 << 20));

  @Test
  void valueStateAndTimersArePerKey() {
    InMemoryStateHandle handle = new InMemoryStateHandle();
    ValueState<String> state = handle.getValueState("s", Encoders.STRING(), TTLConfig.NONE());
    handle.setCurrentKey("a");
    state.update("for a");
    handle.registerTimer(20);
    handle.registerTimer(10);
    handle.setCurrentKey("b");
    assertNull(state.get());
    handle.registerTimer(10);
    assertEquals(List.of(10L), handle.timersOf("b"));
    assertEquals(List.of(new InMemoryStateHandle.Timer("a", 10), new InMemoryStateHandle.Timer(
        "b", 10), new InMemoryStateHandle.Timer("a", 20)), handle.expired(20));
    assertEquals(List.of(new InMemoryStateHandle.Timer("a", 10),
        new InMemoryStateHandle.Timer("b", 10)), handle.expired(19));
    handle.setCurrentKey("a");
    assertEquals("for a", state.get());
    handle.deleteTimer(10);
    state.clear();
    assertEquals(List.of(20L), handle.timersOf("a"));
    assertNull(handle.peek("s", "a"));
  }

  @Test
  void whatTheEngineDoesNotUseIsRefusedByName() {
    InMemoryStateHandle handle = new InMemoryStateHandle();
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> handle.getListState("l", Encoders.STRING(), TTLConfig.NONE()));
    assertTrue(e.getMessage().startsWith("list state (l) is not supported"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> handle.registerTimer(1)); // no current key
  }

  @Test
  void theSessionProcessorRunsInputRowsFirstThenTimersByTimeAndKey() {
    ProcessorDriver driver = new ProcessorDriver(
        new SessionProcessor(new SessionPlan(30 * MIN, 0, 100, 1 << 20), 0));
    assertEquals(List.of(), driver.runBatch(batch(event("a", 10 * MIN), event("b", 5 * MIN)), 0));
    // a late row joins a's open session (within the gap): a is due at 10 + 30, b at 5 + 30
    assertEquals(List.of(), driver.runBatch(batch(event("a", 0)), 20 * MIN));
    assertEquals(2, driver.handle().all(SessionProcessor.STATE_NAME).size());
    // c's too-late row is handled first (input rows before timers), then the timers fire by
    // time, b's before a's, whatever the keys' order
    List<String> out = describe(driver.runBatch(batch(event("c", 0)), 45 * MIN));
    assertEquals(List.of("dead_letter c too_late", "session b 1", "session a 2"), out);
    assertTrue(driver.handle().all(SessionProcessor.STATE_NAME).isEmpty());
    assertTrue(driver.handle().expired(Long.MAX_VALUE).isEmpty());
  }

  /** An event row of {@code key} at {@code tsMs}, as SessionTester's harness builds it. */
  private static Row event(String key, long tsMs) {
    return SessionHarness.eventRow(key, RowJson.JSON.createObjectNode().put("ts_ms", tsMs));
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
      String kind = r.getString(SCHEMA.fieldIndex("kind"));
      String user = r.getString(SCHEMA.fieldIndex("key"));
      out.add(kind + " " + user + " " + ("session".equals(kind)
          ? r.get(SCHEMA.fieldIndex("event_count"))
          : r.get(SCHEMA.fieldIndex("reason"))));
    }
    return out;
  }
}
