package io.streamwarden.engine.join;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;

/**
 * Parameters of the interval join, built by the Python side as JSON ({@link #fromJson}).
 *
 * <p>A left row at {@code l} and a right row at {@code r} of the same key match when {@code r}
 * is in {@code [l + lowerMs, l + upperMs]}, both ends inclusive. All times are epoch
 * milliseconds.
 */
public final class JoinPlan implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> KEYS = Set.of("lower_ms", "upper_ms", "allowed_lateness_ms",
      "left_outer", "max_rows_per_key", "left_name", "right_name");

  /** The interval's lower bound, relative to the left row's time; may be negative. */
  public final long lowerMs;
  /** The interval's upper bound, relative to the left row's time; {@code >= lowerMs}. */
  public final long upperMs;
  /** How far behind the watermark a row may arrive and still be joined. */
  public final long allowedLatenessMs;
  /** True: a left row that never matched is emitted alone once it is freed. */
  public final boolean leftOuter;
  /** Most rows (both sides together) one key buffers; an arriving row past it is dead. */
  public final long maxRowsPerKey;
  /** The left source's name, as dead letters and details show it. */
  public final String leftName;
  /** The right source's name, as dead letters and details show it. */
  public final String rightName;

  public JoinPlan(long lowerMs, long upperMs, long allowedLatenessMs, boolean leftOuter,
      long maxRowsPerKey, String leftName, String rightName) {
    if (lowerMs > upperMs) {
      throw new IllegalArgumentException("join plan: lower_ms must be <= upper_ms, got lower_ms "
          + lowerMs + " and upper_ms " + upperMs);
    }
    if (allowedLatenessMs < 0) {
      throw new IllegalArgumentException("join plan: allowed_lateness_ms must be >= 0, got "
          + allowedLatenessMs);
    }
    if (maxRowsPerKey < 1) {
      throw new IllegalArgumentException("join plan: max_rows_per_key must be >= 1, got "
          + maxRowsPerKey);
    }
    if (leftName == null || leftName.isEmpty() || rightName == null || rightName.isEmpty()) {
      throw new IllegalArgumentException("join plan: left_name and right_name must be "
          + "non-empty, got '" + leftName + "' and '" + rightName + "'");
    }
    this.lowerMs = lowerMs;
    this.upperMs = upperMs;
    this.allowedLatenessMs = allowedLatenessMs;
    this.leftOuter = leftOuter;
    this.maxRowsPerKey = maxRowsPerKey;
    this.leftName = leftName;
    this.rightName = rightName;
  }

  /** The source name of {@code side} ({@link JoinRecord#LEFT} or {@link JoinRecord#RIGHT}). */
  public String sourceName(int side) {
    if (side == JoinRecord.LEFT) {
      return leftName;
    }
    if (side == JoinRecord.RIGHT) {
      return rightName;
    }
    throw new IllegalArgumentException("join side must be " + JoinRecord.LEFT + " (left) or "
        + JoinRecord.RIGHT + " (right), got " + side);
  }

  /**
   * Reads a plan such as {@code {"lower_ms": 0, "upper_ms": 86400000, "allowed_lateness_ms":
   * 600000, "left_outer": true, "max_rows_per_key": 10000, "left_name": "payments",
   * "right_name": "refunds"}}; every field is required.
   *
   * @throws IllegalArgumentException if it is not valid JSON, lacks a field, has an unknown one,
   *     or holds a value of the wrong type or out of range
   */
  public static JoinPlan fromJson(String json) {
    JsonNode node;
    try {
      node = new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("join plan is not valid JSON: " + json, e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("join plan is not a JSON object: " + json);
    }
    for (Iterator<String> keys = node.fieldNames(); keys.hasNext();) {
      String key = keys.next();
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("join plan has an unknown field '" + key
            + "'; the fields are " + new TreeSet<>(KEYS));
      }
    }
    return new JoinPlan(number(node, "lower_ms"), number(node, "upper_ms"),
        number(node, "allowed_lateness_ms"), bool(node, "left_outer"),
        number(node, "max_rows_per_key"), text(node, "left_name"), text(node, "right_name"));
  }

  private static JsonNode required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("join plan lacks field '" + field + "'");
    }
    return value;
  }

  private static long number(JsonNode node, String field) {
    JsonNode value = required(node, field);
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException("join plan: '" + field + "' must be a whole number, "
          + "got " + value);
    }
    return value.asLong();
  }

  private static boolean bool(JsonNode node, String field) {
    JsonNode value = required(node, field);
    if (!value.isBoolean()) {
      throw new IllegalArgumentException("join plan: '" + field + "' must be true or false, "
          + "got " + value);
    }
    return value.asBoolean();
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = required(node, field);
    if (!value.isTextual()) {
      throw new IllegalArgumentException("join plan: '" + field + "' must be a string, got "
          + value);
    }
    return value.asText();
  }
}
