package io.streamwarden.engine.sessions;

/**
 * One aggregate of one session, evaluated incrementally: events are added one by one, and a
 * session a late event bridges to is merged in. Results never depend on how events were batched.
 *
 * <p>Arrival order breaks ties in event time: an event added later arrived later, and what is
 * merged in counts as having arrived after what is held (sessions being merged never share an
 * event time, so only a single event's merge can tie). Null values are skipped by every
 * function except {@code count()} without input, which is given null for every event.
 */
interface Accumulator {
  /** Adds one event's value (null when the event has none) at event time {@code tsMs}. */
  void add(Object value, long tsMs);

  /** Folds in {@code other}, an accumulator of the same function and input kind. */
  void merge(Accumulator other);

  /**
   * The result: a {@link Long}, {@link Double}, {@link String} or {@link Boolean}, a fresh
   * {@link java.util.List} of them for the collecting functions, or null.
   */
  Object result();

  /**
   * Bytes of the values held (collect_* and count_distinct), toward max_session_bytes; none
   * for an accumulator that holds one running value.
   */
  default long heldBytes() {
    return 0;
  }

  /** How many bytes {@link #heldBytes} would grow by if {@code value} were added. */
  default long heldBytesAdding(Object value) {
    return 0;
  }

  void write(StateBytes.Writer out);

  /** Reads what {@link #write} wrote into this accumulator, which is empty. */
  void read(StateBytes.Reader in);
}
