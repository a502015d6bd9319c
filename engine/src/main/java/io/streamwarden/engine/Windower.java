package io.streamwarden.engine;

import io.streamwarden.engine.windows.WindowPlan;
import io.streamwarden.engine.windows.WindowProcessor;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;

/** Entry point of the windows operator, called from Python through py4j. */
public final class Windower {
  private Windower() {}

  /**
   * Aggregates {@code input} (laid out as {@link EngineInput}'s sessions columns, keyed by group)
   * into windows with the plan given as JSON.
   *
   * @return rows of {@link EngineOutput#schema} of the plan's aggregates: a window is a summary
   *     whose {@code start_ms}/{@code end_ms} are the window's and whose {@code session_id} is
   *     its id
   */
  public static Dataset<Row> windows(Dataset<Row> input, String planJson,
      long slowKeyThresholdMs) {
    WindowPlan plan = WindowPlan.fromJson(planJson);
    return input
        .groupBy(input.col(input.columns()[EngineInput.KEY]))
        .as(Encoders.STRING(), Encoders.row(input.schema()))
        .transformWithState(new WindowProcessor(plan, slowKeyThresholdMs),
            TimeMode.EventTime(), OutputMode.Append(),
            Encoders.row(EngineOutput.schema(plan.aggregates)));
  }
}
