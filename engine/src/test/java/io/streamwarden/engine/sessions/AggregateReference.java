package io.streamwarden.engine.sessions;

import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * The aggregates computed directly from all of a session's events at once, written apart from
 * the accumulators (their definitions, not their increments): what the engine must give however
 * the events were batched. Events come in arrival order; ties in event time go by it.
 */
final class AggregateReference {
  private AggregateReference() {}

  /** Every aggregate of {@code plan} over {@code events}, given in arrival order. */
  static List<Object> compute(AggregatePlan plan, List<Event> events) {
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < plan.size(); i++) {
      int input = plan.inputOf(i);
      out.add(input < 0 ? (Object) (long) events.size()
          : compute(plan.function(i), plan.input(input), input, events));
    }
    return out;
  }

  /** Spark's order: strings by their UTF-8 bytes, doubles by Double.compare. */
  static Comparator<Object> order(ValueKind kind) {
    switch (kind) {
      case STRING:
        return (a, b) -> Arrays.compareUnsigned(((String) a).getBytes(StandardCharsets.UTF_8),
            ((String) b).getBytes(StandardCharsets.UTF_8));
      case DOUBLE:
        return (a, b) -> Double.compare((Double) a, (Double) b);
      case LONG:
        return (a, b) -> Long.compare((Long) a, (Long) b);
      default:
        return (a, b) -> Boolean.compare((Boolean) a, (Boolean) b);
    }
  }

  private record Timed(long tsMs, int arrival, Object value) {}

  private static Object compute(AggregateFunction f, ValueKind kind, int input,
      List<Event> events) {
    List<Timed> values = new ArrayList<>();
    for (int a = 0; a < events.size(); a++) {
      Object v = events.get(a).values[input];
      if (v != null) {
        values.add(new Timed(events.get(a).tsMs, a, v));
      }
    }
    Comparator<Timed> byTime = Comparator.comparingLong(Timed::tsMs)
        .thenComparingInt(Timed::arrival);
    values.sort(byTime);
    List<Object> plain = new ArrayList<>();
    values.forEach(t -> plain.add(t.value()));
    switch (f) {
      case COUNT: return (long) plain.size();
      case SUM: return plain.isEmpty() ? null : kind == ValueKind.LONG ? longSum(plain)
          : exact(plain, false);
      case AVG: return plain.isEmpty() ? null : exact(plain, true);
      case MIN: return plain.stream().min(order(kind)).orElse(null);
      case MAX: return plain.stream().max(order(kind)).orElse(null);
      case FIRST: return plain.isEmpty() ? null : plain.get(0);
      case LAST: return plain.isEmpty() ? null : plain.get(plain.size() - 1);
      case COLLECT_LIST: return plain;
      default:
        TreeSet<Object> set = new TreeSet<>(order(kind));
        for (Object v : plain) {
          set.add(v instanceof Double d && d == 0.0d ? (Object) 0.0d : v);
        }
        return f == AggregateFunction.COUNT_DISTINCT ? (Object) (long) set.size()
            : new ArrayList<>(set);
    }
  }

  private static Object longSum(List<Object> values) {
    long sum = 0;
    for (Object v : values) {
      sum = Math.addExact(sum, (Long) v);
    }
    return sum;
  }

  private static Object exact(List<Object> values, boolean average) {
    BigDecimal sum = BigDecimal.ZERO;
    boolean nan = false;
    boolean plus = false;
    boolean minus = false;
    for (Object v : values) {
      if (v instanceof Long l) {
        sum = sum.add(new BigDecimal(l));
        continue;
      }
      double d = (Double) v;
      nan |= Double.isNaN(d);
      plus |= d == Double.POSITIVE_INFINITY;
      minus |= d == Double.NEGATIVE_INFINITY;
      if (Double.isFinite(d)) {
        sum = sum.add(new BigDecimal(d));
      }
    }
    if (nan || (plus && minus)) {
      return Double.NaN;
    }
    if (plus || minus) {
      return plus ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
    }
    return average
        ? sum.divide(new BigDecimal(values.size()), MathContext.DECIMAL128).doubleValue()
        : sum.doubleValue();
  }
}
