package io.streamwarden.engine.sessions;

import java.util.Comparator;

/** {@code min} and {@code max} in the input kind's order ({@link ValueKind#order}). */
final class MinMaxAccumulator implements Accumulator {
  private final ValueKind kind;
  private final Comparator<Object> order;
  private final boolean max;
  private Object value;

  MinMaxAccumulator(ValueKind kind, boolean max) {
    this.kind = kind;
    this.order = kind.order();
    this.max = max;
  }

  @Override
  public void add(Object v, long tsMs) {
    if (v != null && (value == null || (max ? order.compare(v, value) > 0
        : order.compare(v, value) < 0))) {
      value = v;
    }
  }

  @Override
  public void merge(Accumulator other) {
    add(((MinMaxAccumulator) other).value, 0);
  }

  @Override
  public Object result() {
    return value;
  }


  @Override
  public void write(StateBytes.Writer out) {
    out.writeBoolean(value != null);
    if (value != null) {
      kind.write(out, value);
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    value = in.readBoolean() ? kind.read(in) : null;
  }
}
