package io.streamwarden.engine.json;

import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The validation's Java checks as Spark columns, called natively per record by generated code
 * (no Python, no UDF): {@link EventTimes} and {@link RecordShape}.
 */
public final class ValidationColumns {
  private ValidationColumns() {}

  /**
   * Epoch milliseconds of a time written as text ({@link EventTimes#parseMillis}); {@link
   * EventTimes#INVALID} for one that is not accepted, null for null.
   */
  public static Column eventMillis(Column text) {
    return call(EventTimes.class, DataTypes.LongType, "parseMillis", text, false);
  }

  /** What is wrong with a record's shape ({@link RecordShape#problem}), or null. */
  public static Column shapeProblem(Column raw) {
    return call(RecordShape.class, DataTypes.StringType, "problem", raw, true);
  }

  /** The bounds of an accepted event time, {@code [min, max]} in epoch milliseconds. */
  public static long[] eventTimeBounds() {
    return new long[] {EventTimes.MIN_MS, EventTimes.MAX_MS};
  }

  private static Column call(Class<?> owner, DataType type, String method, Column argument,
      boolean returnNullable) {
    Expression invoke = new StaticInvoke(owner, type, method,
        CollectionConverters.asScala(List.of(ExpressionUtils.expression(argument))).toSeq(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(),
        true, returnNullable, true, scala.Option.empty());
    return ExpressionUtils.column(invoke);
  }
}
