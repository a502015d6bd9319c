package io.streamwarden.engine;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs one structured line when a single key takes longer than a threshold (lesson L13), at
 * most once per {@link #MIN_INTERVAL_NS} per task so that logging cannot slow the job down.
 */
public final class SlowWorkLog {
  private static final Logger LOG = LoggerFactory.getLogger("streamwarden.slow");
  static final long MIN_INTERVAL_NS = 10_000_000_000L;

  private final String operator;
  private final long thresholdNs;
  private long lastLoggedNs = Long.MIN_VALUE;
  private long suppressed;

  public SlowWorkLog(String operator, long thresholdMs) {
    this.operator = operator;
    this.thresholdNs = thresholdMs <= 0 ? Long.MAX_VALUE : thresholdMs * 1_000_000L;
  }

  /** Call after a key's work; logs if it took longer than the threshold and the rate allows. */
  public void maybeLog(String key, long startNs, int rows, int stateEntries) {
    long now = System.nanoTime();
    long tookNs = now - startNs;
    if (tookNs < thresholdNs) {
      return;
    }
    if (lastLoggedNs != Long.MIN_VALUE && now - lastLoggedNs < MIN_INTERVAL_NS) {
      suppressed++;
      return;
    }
    LOG.warn("{\"event\":\"slow_key\",\"operator\":\"{}\",\"key\":\"{}\",\"rows\":{},"
        + "\"state_entries\":{},\"took_ms\":{},\"suppressed_since_last\":{}}",
        operator, key.replace("\"", "\\\""), rows, stateEntries, tookNs / 1_000_000L,
        suppressed);
    lastLoggedNs = now;
    suppressed = 0;
  }
}
