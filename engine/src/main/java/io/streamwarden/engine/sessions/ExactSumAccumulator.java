package io.streamwarden.engine.sessions;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;

/**
 * {@code sum} of a double input and {@code avg} of a long or double input, from the EXACT sum
 * (every double is a finite decimal, so a {@link BigDecimal} holds the sum without rounding):
 * the result is rounded once at the end, so it never depends on the order of the values. The
 * sum is that exact sum correctly rounded to a double; the average is the exact sum divided by
 * the count in {@link MathContext#DECIMAL128}, then rounded to a double.
 *
 * <p>NaN and the infinities are counted apart, as IEEE arithmetic would combine them: any NaN,
 * or both infinities, give NaN; one infinity gives itself. Null while no value was added.
 */
final class ExactSumAccumulator implements Accumulator {
  private static final int NAN = 1;
  private static final int POSITIVE_INFINITY = 2;
  private static final int NEGATIVE_INFINITY = 4;

  private final boolean average;
  private long count;
  private int specials;
  private BigDecimal sum = BigDecimal.ZERO;

  ExactSumAccumulator(boolean average) {
    this.average = average;
  }

  @Override
  public void add(Object value, long tsMs) {
    if (value == null) {
      return;
    }
    count++;
    if (value instanceof Long l) {
      sum = sum.add(BigDecimal.valueOf(l));
      return;
    }
    double d = (Double) value;
    if (Double.isNaN(d)) {
      specials |= NAN;
    } else if (d == Double.POSITIVE_INFINITY) {
      specials |= POSITIVE_INFINITY;
    } else if (d == Double.NEGATIVE_INFINITY) {
      specials |= NEGATIVE_INFINITY;
    } else if (d != 0.0d) {
      sum = sum.add(new BigDecimal(d));
    }
  }

  @Override
  public void merge(Accumulator other) {
    ExactSumAccumulator o = (ExactSumAccumulator) other;
    count += o.count;
    specials |= o.specials;
    sum = sum.add(o.sum);
  }

  @Override
  public Object result() {
    if (count == 0) {
      return null;
    }
    if ((specials & NAN) != 0
        || (specials & (POSITIVE_INFINITY | NEGATIVE_INFINITY))
            == (POSITIVE_INFINITY | NEGATIVE_INFINITY)) {
      return Double.NaN;
    }
    if (specials != 0) {
      return (specials & POSITIVE_INFINITY) != 0
          ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
    }
    if (average) {
      return sum.divide(BigDecimal.valueOf(count), MathContext.DECIMAL128).doubleValue();
    }
    return sum.doubleValue();
  }


  @Override
  public void write(StateBytes.Writer out) {
    out.writeVarLong(count);
    if (count > 0) {
      out.writeByte(specials);
      out.writeZigZag(sum.scale());
      out.writeBytes(sum.unscaledValue().toByteArray());
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    count = in.readVarLong();
    if (count > 0) {
      specials = in.readByte();
      int scale = Math.toIntExact(in.readZigZag());
      sum = new BigDecimal(new BigInteger(in.readBytes()), scale);
    }
  }
}
