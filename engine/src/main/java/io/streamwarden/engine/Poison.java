package io.streamwarden.engine;

/**
 * The poison-record guarantee's shared parts: the detail of a {@code poison} dead letter, and a
 * fault hook for tests.
 *
 * <p>No record may fail a batch: whatever a processor throws on one record is caught where it
 * is handled, and that record becomes a {@code poison} dead letter carrying the exception's class
 * and message, while the key's other records of the batch are applied without it (a processor
 * finds the culprits by trying the records one at a time against the stored state, which a
 * failed attempt never wrote). Without such a record, the batch would fail again on every
 * restart, since a restart replays the same planned batch.
 *
 * <p>{@link #failOn} is for tests only: no record can be made to throw on purpose otherwise
 * (validation rejects whatever the engine cannot take), so a test sets a marker and the
 * processors throw on any record whose {@code raw} contains it, after the key's state was
 * changed in memory. It is off (null) unless a test sets it; in local mode the executors share
 * the driver's JVM, so a test can set it through py4j.
 */
public final class Poison {
  /** The longest exception message a dead letter's detail carries. */
  static final int MAX_MESSAGE = 500;

  private static volatile String failOnMarker;
  private static volatile String failUncaughtOnMarker;

  private Poison() {}

  /** Tests only: records whose raw contains {@code marker} make the engine throw; null: none. */
  public static void failOn(String marker) {
    failOnMarker = marker;
  }

  /** Throws {@link InjectedFault} if a test asked {@link #failOn} for this record. */
  public static void check(String raw) {
    String marker = failOnMarker;
    if (marker != null && raw != null && raw.contains(marker)) {
      throw new InjectedFault("injected fault for a record containing '" + marker + "'");
    }
  }

  /**
   * Tests only: records whose raw contains {@code marker} make the session engine throw where
   * nothing catches it, so that their batch fails as a failure outside the engine would (the
   * supervisor's bisection then finds them); null: none.
   */
  public static void failUncaughtOn(String marker) {
    failUncaughtOnMarker = marker;
  }

  /** Throws {@link InjectedFault} if a test asked {@link #failUncaughtOn} for this record. */
  public static void checkUncaught(String raw) {
    String marker = failUncaughtOnMarker;
    if (marker != null && raw != null && raw.contains(marker)) {
      throw new InjectedFault("injected uncaught fault for a record containing '" + marker + "'");
    }
  }

  /** An exception's class and message, on one line and at most {@link #MAX_MESSAGE} long. */
  public static String describe(Throwable error) {
    String message = String.valueOf(error.getMessage()).replaceAll("\\s+", " ").trim();
    if (message.length() > MAX_MESSAGE) {
      message = message.substring(0, MAX_MESSAGE) + "...";
    }
    return error.getClass().getName() + ": " + message;
  }

  /** The detail of a {@code poison} dead letter: what threw, on one line. */
  public static String detail(String where, Throwable error) {
    return where + " threw " + describe(error)
        + "; the record was set aside here and the pipeline went on (the key's other records "
        + "were applied without it)";
  }

  /**
   * The error a failed timer is reported with: a timer has no record to set aside, so the batch
   * fails (the supervisor's to handle), but the message names the key and the watermark.
   */
  public static IllegalStateException onTimer(String engine, String key, long watermarkMs,
      RuntimeException error) {
    return new IllegalStateException("the " + engine + " engine failed on the timer of key '"
        + key + "' at watermark " + watermarkMs + " ms: " + error.getClass().getName() + ": "
        + error.getMessage(), error);
  }

  /** What {@link #check} throws. */
  public static final class InjectedFault extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InjectedFault(String message) {
      super(message);
    }
  }
}
