package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.List;

/**
 * Input values and aggregate results as JSON, where they cross to Python as text (a history
 * event's {@code event_values}, the history merge, the harness): JSON numbers for longs and
 * doubles (a double written with enough digits to read back exactly), strings, booleans, null,
 * and arrays for the collecting functions. NaN and the infinities, which JSON has no numbers
 * for, are written as the strings {@code "NaN"}, {@code "Infinity"} and {@code "-Infinity"};
 * a double is read from those strings too, and from Python's bare {@code NaN} and {@code
 * Infinity}.
 */
public final class ValuesJson {
  /** The mapper for the text Python sends: it also reads Python's bare NaN and Infinity. */
  public static final ObjectMapper JSON = JsonMapper.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

  private ValuesJson() {}

  /** {@code values} as a JSON array's text, such as {@code [12.5,"EUR",null,true]}. */
  public static String write(Object[] values) {
    ArrayNode array = JSON.createArrayNode();
    for (Object v : values) {
      array.add(node(v));
    }
    return array.toString();
  }

  /** One value or result as JSON. */
  public static JsonNode node(Object v) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (v == null) {
      return f.nullNode();
    }
    if (v instanceof Long l) {
      return f.numberNode(l);
    }
    if (v instanceof Double d) {
      if (Double.isNaN(d)) {
        return f.textNode("NaN");
      }
      if (Double.isInfinite(d)) {
        return f.textNode(d > 0 ? "Infinity" : "-Infinity");
      }
      return f.numberNode(d);
    }
    if (v instanceof String s) {
      return f.textNode(s);
    }
    if (v instanceof Boolean b) {
      return f.booleanNode(b);
    }
    if (v instanceof List<?> list) {
      ArrayNode a = f.arrayNode();
      for (Object item : list) {
        a.add(node(item));
      }
      return a;
    }
    throw new IllegalArgumentException("not a value the engine writes: " + v.getClass());
  }

  /**
   * An event's input values, typed by the plan's inputs; a missing or null array is no values,
   * which is right only for a plan without inputs.
   *
   * @throws IllegalArgumentException if the count or a value's type does not fit the plan
   */
  public static Object[] read(JsonNode array, AggregatePlan plan) {
    int n = array == null || array.isNull() ? 0 : array.size();
    if ((array != null && !array.isNull() && !array.isArray()) || n != plan.inputCount()) {
      throw new IllegalArgumentException("event values " + array + " are not a list of the "
          + "plan's " + plan.inputCount() + " inputs");
    }
    Object[] values = new Object[n];
    for (int i = 0; i < n; i++) {
      values[i] = read(array.get(i), plan.input(i), "value_" + i);
    }
    return values;
  }

  /** One value of {@code kind}, or null. */
  static Object read(JsonNode n, ValueKind kind, String where) {
    if (n == null || n.isNull()) {
      return null;
    }
    switch (kind) {
      case LONG:
        if (n.isIntegralNumber() && n.canConvertToLong()) {
          return n.asLong();
        }
        break;
      case DOUBLE:
        if (n.isNumber()) {
          return n.asDouble();
        }
        if (n.isTextual()) {
          switch (n.asText()) {
            case "NaN": return Double.NaN;
            case "Infinity": return Double.POSITIVE_INFINITY;
            case "-Infinity": return Double.NEGATIVE_INFINITY;
            default: break;
          }
        }
        break;
      case STRING:
        if (n.isTextual()) {
          return n.asText();
        }
        break;
      default:
        if (n.isBoolean()) {
          return n.asBoolean();
        }
        break;
    }
    throw new IllegalArgumentException(where + " is " + n + ", not a " + kind.planName);
  }
}
