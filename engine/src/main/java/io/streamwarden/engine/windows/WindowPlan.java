package io.streamwarden.engine.windows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.streamwarden.engine.sessions.AggregatePlan;
import java.io.Serializable;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;

/**
 * Parameters of the windows operator, built by the Python side as JSON ({@link #fromJson}), with
 * the aggregates the user declared ({@link AggregatePlan}, the same as sessions carry).
 *
 * <p>Windows are aligned to the epoch: {@code [k * slide, k * slide + size)}. {@code size} is a
 * whole multiple of {@code slide} (tumbling windows have {@code slide == size}), so every event
 * falls in exactly {@link #windowsPerEvent} windows, which keeps the accounting exact. All times
 * are epoch milliseconds.
 */
public final class WindowPlan implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> KEYS = Set.of("size_ms", "slide_ms", "allowed_lateness_ms",
      "emit", "max_events", "max_window_bytes", "inputs", "aggregates");

  /** How long a window lasts. */
  public final long sizeMs;
  /** How far apart windows start; equal to {@code sizeMs} for tumbling windows. */
  public final long slideMs;
  /** How long after its end a window still takes late events (and, emitting finals, waits). */
  public final long allowedLatenessMs;
  /**
   * True: a revision per micro-batch that changed a window ({@code emit = "updates"}); false: one
   * row per window once its end plus the lateness has passed ({@code emit = "final"}).
   */
  public final boolean emitUpdates;
  /** Most events one window accepts; an event past it in any of its windows is dead-lettered. */
  public final long maxEvents;
  /** Most bytes one window holds: records plus the values its aggregates hold. */
  public final long maxWindowBytes;
  /** The inputs and aggregates each window carries. */
  public final AggregatePlan aggregates;

  public WindowPlan(long sizeMs, long slideMs, long allowedLatenessMs, boolean emitUpdates,
      long maxEvents, long maxWindowBytes, AggregatePlan aggregates) {
    if (sizeMs <= 0 || slideMs <= 0 || slideMs > sizeMs || sizeMs % slideMs != 0) {
      throw new IllegalArgumentException("window plan: size_ms must be a whole multiple of "
          + "slide_ms, both > 0, got size_ms " + sizeMs + " and slide_ms " + slideMs);
    }
    if (allowedLatenessMs < 0) {
      throw new IllegalArgumentException("window plan: allowed_lateness_ms must be >= 0, got "
          + allowedLatenessMs);
    }
    if (maxEvents < 1 || maxWindowBytes < 1) {
      throw new IllegalArgumentException("window plan: max_events and max_window_bytes must be "
          + ">= 1, got " + maxEvents + " and " + maxWindowBytes);
    }
    this.sizeMs = sizeMs;
    this.slideMs = slideMs;
    this.allowedLatenessMs = allowedLatenessMs;
    this.emitUpdates = emitUpdates;
    this.maxEvents = maxEvents;
    this.maxWindowBytes = maxWindowBytes;
    this.aggregates = aggregates == null ? AggregatePlan.NONE : aggregates;
  }

  /** How many windows every event falls in: {@code size / slide}. */
  public int windowsPerEvent() {
    return (int) (sizeMs / slideMs);
  }

  /** The start of the latest window holding {@code tsMs}; the others start a slide apart. */
  public long lastStart(long tsMs) {
    return tsMs - Math.floorMod(tsMs, slideMs);
  }

  /** The start of the earliest window holding {@code tsMs}: the first one to close. */
  public long firstStart(long tsMs) {
    return lastStart(tsMs) - sizeMs + slideMs;
  }

  /**
   * Reads a plan such as {@code {"size_ms": 60000, "slide_ms": 60000, "allowed_lateness_ms":
   * 600000, "emit": "final", "max_events": 100000, "max_window_bytes": 64000000, "inputs":
   * ["double"], "aggregates": [{"function": "sum", "input": 0}]}}; {@code inputs} and {@code
   * aggregates} may be left out.
   *
   * @throws IllegalArgumentException if it is not valid JSON, lacks a field, has an unknown one,
   *     or holds a value out of range
   */
  public static WindowPlan fromJson(String json) {
    JsonNode node;
    try {
      node = new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("window plan is not valid JSON: " + json, e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("window plan is not a JSON object: " + json);
    }
    for (Iterator<String> keys = node.fieldNames(); keys.hasNext();) {
      String key = keys.next();
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("window plan has an unknown field '" + key
            + "'; the fields are " + new TreeSet<>(KEYS));
      }
    }
    JsonNode emit = node.get("emit");
    if (emit == null || !emit.isTextual()
        || !(emit.asText().equals("final") || emit.asText().equals("updates"))) {
      throw new IllegalArgumentException("window plan: 'emit' must be \"final\" or "
          + "\"updates\", got " + emit);
    }
    return new WindowPlan(number(node, "size_ms"), number(node, "slide_ms"),
        number(node, "allowed_lateness_ms"), emit.asText().equals("updates"),
        number(node, "max_events"), number(node, "max_window_bytes"),
        AggregatePlan.fromJson(node.get("inputs"), node.get("aggregates")));
  }

  private static long number(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("window plan lacks field '" + field + "'");
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException("window plan: '" + field + "' must be a whole number, "
          + "got " + value);
    }
    return value.asLong();
  }
}
