package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.types.DataType;

/** How a detail text shows a value as the record wrote it, and a declared type. */
final class Shown {
  /** Longer values are cut to this many characters in a detail. */
  static final int MAX_CHARS = 60;

  private Shown() {}

  /** The current value, for "got ...": {@code the string "12.5"}, {@code the number 1e3}. */
  static String value(JsonParser parser, JsonToken token) throws IOException {
    return switch (token) {
      case VALUE_STRING -> "the string " + quoted(parser.getText());
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "the number " + cut(parser.getText());
      case VALUE_TRUE -> "true";
      case VALUE_FALSE -> "false";
      case START_OBJECT -> "an object";
      case START_ARRAY -> "an array";
      default -> String.valueOf(token.asString());
    };
  }

  /** A text in double quotes with JSON's escapes, cut to {@link #MAX_CHARS}. */
  static String quoted(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2).append('"');
    String shown = cut(text);
    for (int i = 0; i < shown.length(); i++) {
      char c = shown.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }

  /** The text cut to {@link #MAX_CHARS} characters (never inside a surrogate pair), with "...". */
  static String cut(String text) {
    if (text.length() <= MAX_CHARS) {
      return text;
    }
    int end = Character.isHighSurrogate(text.charAt(MAX_CHARS - 1)) ? MAX_CHARS - 1 : MAX_CHARS;
    return text.substring(0, end) + "...";
  }

  /** A type as DDL writes it, with its article: {@code a DOUBLE}, {@code an ARRAY<INT>}. */
  static String type(DataType type) {
    String sql = type.sql();
    return ("AEIOU".indexOf(sql.charAt(0)) >= 0 ? "an " : "a ") + sql;
  }
}
