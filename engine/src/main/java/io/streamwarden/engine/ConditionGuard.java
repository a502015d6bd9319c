package io.streamwarden.engine;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.TryEval;
import org.apache.spark.sql.classic.ExpressionUtils;

/**
 * Conditions that cannot fail a batch, a pattern stage's or a schema rule's: Spark's {@link
 * TryEval} around a condition turns an error it raises on one record (an ANSI error such as a
 * failed {@code CAST} or a division by zero, {@code raise_error}) into null, and Python makes
 * that record a dead letter naming the stage or rule and what it threw ({@link #errorOf}),
 * instead of a batch that fails again on every restart.
 */
public final class ConditionGuard {
  private ConditionGuard() {}

  /** {@code condition} evaluated under {@link TryEval}: null where it threw. */
  public static Column tryEval(Column condition) {
    return ExpressionUtils.column(new TryEval(ExpressionUtils.expression(condition)));
  }

  /**
   * What {@code condition} threw on a record (the exception's class and message, on one line),
   * null where it did not throw ({@link ConditionError}).
   */
  public static Column errorOf(Column condition) {
    return ExpressionUtils.column(new ConditionError(ExpressionUtils.expression(condition)));
  }
}
