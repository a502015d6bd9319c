package io.streamwarden.engine.patterns;

/**
 * A skip strategy with {@code throw_on_miss} found no event to skip to (Flink's {@code
 * throwExceptionOnMiss}): the match has no event of the skip stage, or the skip would return to
 * the match's own first event and find it again. In a pipeline it stops the query (as it
 * fails a Flink job), with this message and the key.
 */
public final class SkipMissException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  SkipMissException(String message) {
    super(message);
  }
}
