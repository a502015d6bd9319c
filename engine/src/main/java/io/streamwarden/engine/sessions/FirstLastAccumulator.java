package io.streamwarden.engine.sessions;

/**
 * {@code first} and {@code last}: the value of the event with the earliest (latest) event time
 * among those whose value is not null. A tie in event time goes to the earlier arrival for
 * {@code first} and to the later one for {@code last}: a value added or merged in replaces the
 * held one iff its time is below it ({@code first}), or at or above it ({@code last}).
 */
final class FirstLastAccumulator implements Accumulator {
  private final ValueKind kind;
  private final boolean last;
  private Object value;
  private long tsMs;

  FirstLastAccumulator(ValueKind kind, boolean last) {
    this.kind = kind;
    this.last = last;
  }

  @Override
  public void add(Object v, long t) {
    if (v != null && (value == null || (last ? t >= tsMs : t < tsMs))) {
      value = v;
      tsMs = t;
    }
  }

  @Override
  public void merge(Accumulator other) {
    FirstLastAccumulator o = (FirstLastAccumulator) other;
    add(o.value, o.tsMs);
  }

  @Override
  public Object result() {
    return value;
  }


  @Override
  public void write(StateBytes.Writer out) {
    out.writeBoolean(value != null);
    if (value != null) {
      out.writeZigZag(tsMs);
      kind.write(out, value);
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    if (in.readBoolean()) {
      tsMs = in.readZigZag();
      value = kind.read(in);
    }
  }
}
