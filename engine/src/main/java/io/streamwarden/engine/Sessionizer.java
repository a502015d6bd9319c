package io.streamwarden.engine;

import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.SessionProcessor;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;

/** Entry point called from Python through py4j. */
public final class Sessionizer {
  private Sessionizer() {}

  /**
   * Sessionizes {@code input} (laid out as {@link EngineInput}) with the plan given as JSON.
   *
   * @return rows of {@link EngineOutput#schema} of the plan
   */
  public static Dataset<Row> sessionize(Dataset<Row> input, String planJson,
      long slowKeyThresholdMs) {
    SessionPlan plan = SessionPlan.fromJson(planJson);
    // Grouping by the column (not a MapFunction) spares a deserialisation of every row.
    return input
        .groupBy(input.col(input.columns()[EngineInput.KEY]))
        .as(Encoders.STRING(), Encoders.row(input.schema()))
        .transformWithState(new SessionProcessor(plan, slowKeyThresholdMs),
            TimeMode.EventTime(), OutputMode.Append(), Encoders.row(EngineOutput.schema(plan)));
  }
}
