package io.streamwarden.engine.patterns;

import io.streamwarden.engine.patterns.PatternPlan.AggregateCondition;

/** Evaluates {@link AggregateCondition}s over a partial match's events (count, sum, min, max,
 * avg of a numeric field), without Spark. */
final class Aggregates {
  private Aggregates() {}

  /**
   * True if {@code ac} holds for event {@code e} at partial {@code p}; {@code current} when the
   * aggregated stage is the stage evaluating {@code e}, which then counts as one of its events.
   * A value that is missing or not a number makes the condition false.
   */
  static boolean holds(AggregateCondition ac, Partial p, boolean current, PEvent e) {
    int n = 0;
    double sum = 0;
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    int events = p == null ? 0 : p.events.size();
    for (int i = 0; i <= events; i++) {
      PEvent x;
      if (i < events) {
        if (p.stageOf[i] != ac.refStage) {
          continue;
        }
        x = p.events.get(i);
      } else if (current) {
        x = e;
      } else {
        break;
      }
      n++;
      if (ac.field < 0) {
        continue;
      }
      Double v = number(x.values[ac.field]);
      if (v == null) {
        return false;
      }
      sum += v;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    double result;
    switch (ac.agg) {
      case "count":
        result = n;
        break;
      case "sum":
        result = sum;
        break;
      case "min":
        result = min;
        break;
      case "max":
        result = max;
        break;
      case "avg":
        result = n == 0 ? Double.NaN : sum / n;
        break;
      default:
        throw new IllegalArgumentException("unknown aggregate " + ac.agg);
    }
    if (n == 0 && !ac.agg.equals("count") && !ac.agg.equals("sum")) {
      return false;
    }
    return Nfa.compare(Double.toString(result), ac.op, Double.toString(ac.value), true);
  }

  private static Double number(String text) {
    if (text == null) {
      return null;
    }
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
