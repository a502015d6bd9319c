package io.streamwarden.engine.sessions;

/** {@code count()}: every event; {@code count(input)}: events whose value is not null. */
final class CountAccumulator implements Accumulator {
  private final boolean everyEvent;
  private long count;

  CountAccumulator(boolean everyEvent) {
    this.everyEvent = everyEvent;
  }

  @Override
  public void add(Object value, long tsMs) {
    if (everyEvent || value != null) {
      count++;
    }
  }

  @Override
  public void merge(Accumulator other) {
    count += ((CountAccumulator) other).count;
  }

  @Override
  public Object result() {
    return count;
  }


  @Override
  public void write(StateBytes.Writer out) {
    out.writeVarLong(count);
  }

  @Override
  public void read(StateBytes.Reader in) {
    count = in.readVarLong();
  }
}
