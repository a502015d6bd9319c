package io.streamwarden.engine.sessions;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** The aggregate functions a plan may name, with their result types and accumulators. */
public enum AggregateFunction {
  COUNT("count"),
  SUM("sum"),
  MIN("min"),
  MAX("max"),
  AVG("avg"),
  FIRST("first"),
  LAST("last"),
  COUNT_DISTINCT("count_distinct"),
  COLLECT_LIST("collect_list"),
  COLLECT_SET("collect_set");

  /** The function's name in a plan's {@code aggregates}. */
  public final String planName;

  AggregateFunction(String planName) {
    this.planName = planName;
  }

  /** The function named {@code name} in a plan, or null. */
  static AggregateFunction named(String name) {
    for (AggregateFunction f : values()) {
      if (f.planName.equals(name)) {
        return f;
      }
    }
    return null;
  }

  /** Every name, for messages. */
  static String names() {
    StringBuilder b = new StringBuilder();
    for (AggregateFunction f : values()) {
      b.append(b.length() == 0 ? "" : ", ").append(f.planName);
    }
    return b.toString();
  }

  /** Whether the function needs an input ({@code count} alone counts events without one). */
  boolean needsInput() {
    return this != COUNT;
  }

  /** Whether the function takes only long or double inputs. */
  boolean numbersOnly() {
    return this == SUM || this == AVG;
  }

  /** Whether the function holds values, which count toward {@code max_session_bytes}. */
  boolean holdsValues() {
    return this == COUNT_DISTINCT || this == COLLECT_LIST || this == COLLECT_SET;
  }

  /** The Spark type of the result over an input of {@code kind} (null: {@code count()}). */
  DataType resultType(ValueKind kind) {
    switch (this) {
      case COUNT:
      case COUNT_DISTINCT:
        return DataTypes.LongType;
      case AVG:
        return DataTypes.DoubleType;
      case COLLECT_LIST:
      case COLLECT_SET:
        return DataTypes.createArrayType(kind.sparkType(), false);
      default:
        return kind.sparkType();
    }
  }

  /** A new, empty accumulator over an input of {@code kind} (null: {@code count()}). */
  Accumulator newAccumulator(ValueKind kind) {
    switch (this) {
      case COUNT: return new CountAccumulator(kind == null);
      case SUM: return kind == ValueKind.LONG ? new LongSumAccumulator()
          : new ExactSumAccumulator(false);
      case AVG: return new ExactSumAccumulator(true);
      case MIN: return new MinMaxAccumulator(kind, false);
      case MAX: return new MinMaxAccumulator(kind, true);
      case FIRST: return new FirstLastAccumulator(kind, false);
      case LAST: return new FirstLastAccumulator(kind, true);
      case COUNT_DISTINCT: return new DistinctAccumulator(kind, false);
      case COLLECT_SET: return new DistinctAccumulator(kind, true);
      default: return new CollectListAccumulator(kind);
    }
  }
}
