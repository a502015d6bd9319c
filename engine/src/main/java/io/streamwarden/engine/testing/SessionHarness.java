package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
import io.streamwarden.engine.sessions.AggregatePlan;
import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.SessionProcessor;
import io.streamwarden.engine.sessions.ValuesJson;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Runs the real {@link SessionProcessor} without Spark, for Python's {@code SessionTester}: input
 * rows laid out as {@link EngineInput}, state and timers in an {@link InMemoryStateHandle},
 * micro-batches in transformWithState's order ({@link ProcessorDriver}). Talks JSON so that
 * Python drives it over py4j cheaply (one call per batch); outputs are rows of the plan's {@link
 * EngineOutput#schema} named by their columns.
 */
public final class SessionHarness {
  private final ProcessorDriver driver;
  private final AggregatePlan aggregates;
  private final StructType schema;

  public SessionHarness(String planJson) {
    SessionPlan plan = SessionPlan.fromJson(planJson);
    driver = new ProcessorDriver(new SessionProcessor(plan, 0));
    aggregates = plan.aggregates;
    schema = EngineOutput.schema(plan);
  }

  /**
   * Runs one micro-batch. {@code eventsJson} is a list of {@code {"key", "ts_ms", "size", "raw",
   * "values": [...]}}, the values typed by the plan's inputs (JSON numbers for long and double,
   * strings, booleans, null); returns the output rows as JSON.
   */
  public String runBatch(String eventsJson, long watermarkMs) throws Exception {
    return RowJson.toJson(driver.runBatch(
        RowJson.rowsByKey(eventsJson, (key, n) -> eventRow(key, n, aggregates)), watermarkMs),
        schema);
  }

  /** One valid event of a plan without inputs as the engine reads it. */
  static Row eventRow(String key, JsonNode n) {
    return eventRow(key, n, AggregatePlan.NONE);
  }

  /** One valid event as the engine reads it, its values typed by the plan's inputs. */
  static Row eventRow(String key, JsonNode n, AggregatePlan aggregates) {
    Object[] values = ValuesJson.read(n.get("values"), aggregates);
    Object[] row = new Object[EngineInput.SESSION_VALUES + values.length];
    row[EngineInput.KEY] = key;
    row[EngineInput.KIND] = EngineInput.KIND_EVENT;
    row[EngineInput.TS_MS] = n.get("ts_ms").asLong();
    row[EngineInput.SIZE] = n.path("size").asLong(1);
    row[EngineInput.RAW] = n.path("raw").asText("");
    row[EngineInput.USER] = key;
    System.arraycopy(values, 0, row, EngineInput.SESSION_VALUES, values.length);
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
