package io.streamwarden.engine.sessions;

/**
 * {@code sum} of a long input: exact, so an overflow throws ({@link Math#addExact}) and the
 * processor sets the event aside as {@code poison}; null while no value was added.
 */
final class LongSumAccumulator implements Accumulator {
  private boolean any;
  private long sum;

  @Override
  public void add(Object value, long tsMs) {
    if (value != null) {
      sum = Math.addExact(sum, (Long) value);
      any = true;
    }
  }

  @Override
  public void merge(Accumulator other) {
    LongSumAccumulator o = (LongSumAccumulator) other;
    if (o.any) {
      sum = Math.addExact(sum, o.sum);
      any = true;
    }
  }

  @Override
  public Object result() {
    return any ? sum : null;
  }


  @Override
  public void write(StateBytes.Writer out) {
    out.writeBoolean(any);
    if (any) {
      out.writeZigZag(sum);
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    any = in.readBoolean();
    if (any) {
      sum = in.readZigZag();
    }
  }
}
