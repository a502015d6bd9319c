package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.SessionProcessor;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * Runs the real {@link SessionProcessor} without Spark, for Python's {@code SessionTester}: input
 * rows laid out as {@link EngineInput}, state and timers in an {@link InMemoryStateHandle},
 * micro-batches in transformWithState's order ({@link ProcessorDriver}). Talks JSON so that
 * Python drives it over py4j cheaply (one call per batch); outputs are {@link
 * EngineOutput#SCHEMA} rows named by their columns.
 */
public final class SessionHarness {
  private final ProcessorDriver driver;

  public SessionHarness(String planJson) {
    driver = new ProcessorDriver(new SessionProcessor(SessionPlan.fromJson(planJson), 0));
  }

  /**
   * Runs one micro-batch. {@code eventsJson} is a list of
   * {@code {"key", "ts_ms", "page", "url", "size", "raw"}}; returns the output rows as JSON.
   */
  public String runBatch(String eventsJson, long watermarkMs) throws Exception {
    return RowJson.toJson(
        driver.runBatch(RowJson.rowsByKey(eventsJson, SessionHarness::eventRow), watermarkMs),
        EngineOutput.SCHEMA);
  }

  /** One valid event as the engine reads it. */
  static Row eventRow(String key, JsonNode n) {
    Object[] row = InputRow.sizedFor(EngineInput.KEY, EngineInput.KIND, EngineInput.TS_MS,
        EngineInput.PAGE, EngineInput.URL, EngineInput.SIZE, EngineInput.RAW,
        EngineInput.REASON, EngineInput.DETAIL, EngineInput.USER);
    row[EngineInput.KEY] = key;
    row[EngineInput.KIND] = EngineInput.KIND_EVENT;
    row[EngineInput.TS_MS] = n.get("ts_ms").asLong();
    row[EngineInput.PAGE] = n.path("page").asLong(1);
    row[EngineInput.URL] = n.path("url").asText("");
    row[EngineInput.SIZE] = n.path("size").asLong(1);
    row[EngineInput.RAW] = n.path("raw").asText("");
    row[EngineInput.USER] = key;
    return RowFactory.create(row);
  }

  /** The state of one key as JSON, or {@code null} if the key holds none. */
  public String peek(String key) throws Exception {
    Object state = driver.handle().peek(SessionProcessor.STATE_NAME, key);
    return state == null ? null : RowJson.JSON.writeValueAsString(state);
  }

  /** How many keys hold state: what Spark reports as the operator's state rows. */
  public int stateRows() {
    return driver.handle().all(SessionProcessor.STATE_NAME).size();
  }
}
