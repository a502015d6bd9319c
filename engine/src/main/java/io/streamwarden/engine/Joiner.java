package io.streamwarden.engine;

import io.streamwarden.engine.join.JoinOutput;
import io.streamwarden.engine.join.JoinPlan;
import io.streamwarden.engine.join.JoinProcessor;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;

/** Entry point of the interval join, called from Python through py4j. */
public final class Joiner {
  private Joiner() {}

  /**
   * Joins the two sides in {@code input} (both sources' rows in one dataset, laid out as {@link
   * EngineInput#joinColumns}, keyed by the join key) with the plan given as JSON ({@link
   * JoinPlan#fromJson}).
   *
   * @return rows of {@link JoinOutput#schema}: joined pairs, left-outer rows alone, and dead
   *     letters
   */
  public static Dataset<Row> join(Dataset<Row> input, String planJson,
      long slowKeyThresholdMs) {
    JoinPlan plan = JoinPlan.fromJson(planJson);
    return input
        .groupBy(input.col(input.columns()[EngineInput.KEY]))
        .as(Encoders.STRING(), Encoders.row(input.schema()))
        .transformWithState(new JoinProcessor(plan, slowKeyThresholdMs),
            TimeMode.EventTime(), OutputMode.Append(), Encoders.row(JoinOutput.schema()));
  }
}
