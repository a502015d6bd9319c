package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.patterns.KeyState;
import io.streamwarden.engine.patterns.Partial;
import io.streamwarden.engine.patterns.PatternPlan;
import io.streamwarden.engine.patterns.PatternProcessor;
import io.streamwarden.engine.patterns.PatternRows;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Runs the real {@link PatternProcessor} without Spark, for Python's {@code PatternTester}:
 * input rows laid out as {@link PatternRows}, state (its binary encoding, as in the state store)
 * and timers in an {@link InMemoryStateHandle}, micro-batches in transformWithState's order
 * ({@link ProcessorDriver}). Talks JSON so that Python tests can drive it over py4j; outputs are
 * {@link PatternRows#SCHEMA} rows named by their columns.
 */
public final class PatternHarness {
  private final PatternPlan plan;
  private final ProcessorDriver driver;

  public PatternHarness(String planJson) {
    plan = PatternPlan.fromJson(planJson);
    driver = new ProcessorDriver(new PatternProcessor(plan));
  }

  /** {@code eventsJson}: a list of {"key", "ts_ms", "mask", "values": [...], "raw"}. */
  public String runBatch(String eventsJson, long watermarkMs) throws Exception {
    return RowJson.toJson(
        driver.runBatch(RowJson.rowsByKey(eventsJson, PatternHarness::eventRow), watermarkMs),
        PatternRows.SCHEMA);
  }

  /** One valid event as the engine reads it; without a {@code raw}, dead letters describe it. */
  private static Row eventRow(String key, JsonNode n) {
    Object[] row = InputRow.sizedFor(EngineInput.KEY, EngineInput.KIND,
        EngineInput.TS_MS, EngineInput.MASK, EngineInput.VALUES, EngineInput.RAW,
        EngineInput.REASON, EngineInput.DETAIL, EngineInput.USER);
    List<String> values = new ArrayList<>();
    for (JsonNode v : n.path("values")) {
      values.add(v.isNull() ? null : v.asText());
    }
    row[EngineInput.KEY] = key;
    row[EngineInput.KIND] = EngineInput.KIND_EVENT;
    row[EngineInput.TS_MS] = n.get("ts_ms").asLong();
    row[EngineInput.MASK] = n.get("mask").asLong();
    row[EngineInput.VALUES] = CollectionConverters.asScala(values).toSeq();
    row[EngineInput.RAW] = n.hasNonNull("raw") ? n.get("raw").asText() : null;
    row[EngineInput.USER] = key;
    return RowFactory.create(row);
  }

  /** The key's state as JSON ({"buffered", "timer_ms", "partials": [[stage@ts...]...]}), or null. */
  public String peek(String key) throws Exception {
    byte[] stored = (byte[]) driver.handle().peek(PatternProcessor.STATE_NAME, key);
    if (stored == null) {
      return null;
    }
    KeyState s = KeyState.decode(stored);
    ObjectNode n = RowJson.JSON.createObjectNode();
    n.put("buffered", s.buffer.size());
    List<Long> timers = driver.handle().timersOf(key);
    n.put("timer_ms", timers.isEmpty() ? KeyState.NO_TIMER : timers.get(0));
    ArrayNode partials = n.putArray("partials");
    for (Partial p : s.partials) {
      ArrayNode a = partials.addArray();
      for (int i = 0; i < p.events.size(); i++) {
        a.add(plan.stages.get(p.stageOf[i]).name + "@" + p.events.get(i).tsMs);
      }
    }
    return RowJson.JSON.writeValueAsString(n);
  }

  /** Keys holding state: the operator's state rows in Spark. */
  public int stateRows() {
    return driver.handle().all(PatternProcessor.STATE_NAME).size();
  }

  /** Bytes of all keys' encoded state. */
  public long stateBytes() {
    long total = 0;
    for (Object stored : driver.handle().all(PatternProcessor.STATE_NAME).values()) {
      total += ((byte[]) stored).length;
    }
    return total;
  }
}
