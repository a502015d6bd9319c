package io.streamwarden.engine.sessions;

/**
 * One validated event, as the engine sees it: its time, its record's size and text, and its
 * input values ({@code value_0} ..), each a {@link Long}, {@link Double}, {@link String} or
 * {@link Boolean} as the plan's {@code inputs} say, or null.
 */
public final class Event {
  private static final Object[] NO_VALUES = new Object[0];

  public final long tsMs;
  public final long size;
  public final String raw;
  /** The plan's inputs, in order; not copied, and not to be changed. */
  public final Object[] values;

  public Event(long tsMs, long size, String raw, Object[] values) {
    this.tsMs = tsMs;
    this.size = size;
    this.raw = raw;
    this.values = values == null ? NO_VALUES : values;
  }

  /** An event without input values. */
  public Event(long tsMs, long size, String raw) {
    this(tsMs, size, raw, NO_VALUES);
  }

  /**
   * Checks the values against the plan's inputs, so that an event of the wrong shape is refused
   * when it is read rather than half-way through a session.
   *
   * @throws IllegalArgumentException naming the value and the kind it should have
   */
  public Event checkedAgainst(AggregatePlan plan) {
    if (values.length != plan.inputCount()) {
      throw new IllegalArgumentException("event has " + values.length + " input values, the "
          + "plan " + plan.inputCount());
    }
    for (int i = 0; i < values.length; i++) {
      if (values[i] != null && !plan.input(i).holds(values[i])) {
        throw new IllegalArgumentException("value_" + i + " is a "
            + values[i].getClass().getSimpleName() + ", the plan says " + plan.input(i).planName);
      }
    }
    return this;
  }
}
