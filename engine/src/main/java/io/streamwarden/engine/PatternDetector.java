package io.streamwarden.engine;

import io.streamwarden.engine.patterns.PatternPlan;
import io.streamwarden.engine.patterns.PatternProcessor;
import io.streamwarden.engine.patterns.PatternRows;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;

/** Entry point of the pattern operator, called from Python through py4j. */
public final class PatternDetector {
  private PatternDetector() {}

  /**
   * Runs the pattern given as JSON over {@code input} (laid out as {@link EngineInput}).
   *
   * @return rows of {@link PatternRows#SCHEMA}
   */
  public static Dataset<Row> detect(Dataset<Row> input, String planJson) {
    PatternPlan plan = PatternPlan.fromJson(planJson);
    return input
        .groupBy(input.col(input.columns()[EngineInput.KEY]))
        .as(Encoders.STRING(), Encoders.row(input.schema()))
        .transformWithState(new PatternProcessor(plan), TimeMode.EventTime(),
            OutputMode.Append(), Encoders.row(PatternRows.SCHEMA));
  }
}
