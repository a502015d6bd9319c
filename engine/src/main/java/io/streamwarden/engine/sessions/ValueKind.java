package io.streamwarden.engine.sessions;

import java.util.Comparator;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * The four kinds of value a plan input holds, as Python casts them before the engine sees them:
 * {@code long} (Java {@link Long}), {@code double} ({@link Double}), {@code string} ({@link
 * String}) and {@code boolean} ({@link Boolean}). Each kind knows its Spark type, its order,
 * the bytes a held value counts toward {@code max_session_bytes}, and its state encoding.
 *
 * <p>Order is Spark's where it is total: strings by Unicode code point (UTF-8 byte order, not
 * {@link String#compareTo}'s UTF-16 units), false before true, doubles by {@link Double#compare}
 * (-0.0 before 0.0, NaN last), so that min and max never depend on arrival order.
 */
public enum ValueKind {
  LONG("long"),
  DOUBLE("double"),
  STRING("string"),
  BOOLEAN("boolean");

  /** The bytes a held long or double counts; a string counts its UTF-8 length, a boolean 1. */
  static final int NUMBER_BYTES = 8;

  private static final Comparator<Object> LONGS = (a, b) -> Long.compare((Long) a, (Long) b);
  private static final Comparator<Object> DOUBLES =
      (a, b) -> Double.compare((Double) a, (Double) b);
  private static final Comparator<Object> STRINGS =
      (a, b) -> compareCodePoints((String) a, (String) b);
  private static final Comparator<Object> BOOLEANS =
      (a, b) -> Boolean.compare((Boolean) a, (Boolean) b);

  /** The kind's name in a plan's {@code inputs}. */
  public final String planName;

  ValueKind(String planName) {
    this.planName = planName;
  }

  /** The kind named {@code name} in a plan, or null. */
  static ValueKind named(String name) {
    for (ValueKind k : values()) {
      if (k.planName.equals(name)) {
        return k;
      }
    }
    return null;
  }

  public DataType sparkType() {
    switch (this) {
      case LONG: return DataTypes.LongType;
      case DOUBLE: return DataTypes.DoubleType;
      case STRING: return DataTypes.StringType;
      default: return DataTypes.BooleanType;
    }
  }

  boolean isNumber() {
    return this == LONG || this == DOUBLE;
  }

  /** Whether {@code v} (not null) is a value of this kind. */
  boolean holds(Object v) {
    switch (this) {
      case LONG: return v instanceof Long;
      case DOUBLE: return v instanceof Double;
      case STRING: return v instanceof String;
      default: return v instanceof Boolean;
    }
  }

  Comparator<Object> order() {
    switch (this) {
      case LONG: return LONGS;
      case DOUBLE: return DOUBLES;
      case STRING: return STRINGS;
      default: return BOOLEANS;
    }
  }

  /** The bytes {@code v} counts toward {@code max_session_bytes} while a session holds it. */
  long heldBytes(Object v) {
    switch (this) {
      case STRING: return StateBytes.utf8Length((String) v);
      case BOOLEAN: return 1;
      default: return NUMBER_BYTES;
    }
  }

  /**
   * The value as a set holds it: -0.0 as 0.0 (Spark normalizes them for grouping; NaNs are one
   * value already under {@link Double#compare}).
   */
  Object distinctForm(Object v) {
    if (this == DOUBLE && (Double) v == 0.0d) {
      return 0.0d;
    }
    return v;
  }

  void write(StateBytes.Writer out, Object v) {
    switch (this) {
      case LONG: out.writeZigZag((Long) v); break;
      case DOUBLE: out.writeDouble((Double) v); break;
      case STRING: out.writeString((String) v); break;
      default: out.writeBoolean((Boolean) v); break;
    }
  }

  Object read(StateBytes.Reader in) {
    switch (this) {
      case LONG: return in.readZigZag();
      case DOUBLE: return in.readDouble();
      case STRING: return in.readString();
      default: return in.readBoolean();
    }
  }

  /**
   * Strings by Unicode code point, which is UTF-8 byte order: UTF-16 units order them alike
   * except a surrogate (U+10000 and above) against U+E000..U+FFFF, which this fixes up.
   */
  static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        if (x >= 0xD800 && y >= 0xD800) {
          return codePointRank(x) - codePointRank(y);
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }

  /** Surrogates above U+E000..U+FFFF, as the code points they make are. */
  private static int codePointRank(char c) {
    return c >= 0xE000 ? c - 0x800 : c + 0x2000;
  }
}
