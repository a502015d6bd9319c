package io.streamwarden.engine.json;

import java.nio.charset.StandardCharsets;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Whether a record is exactly one JSON object: optional white space, one object, optional white
 * space, nothing else (RFC 8259). Spark's JSON parser reads the first value and ignores what
 * follows it, so {@code {...}{...}} or {@code {...} garbage} would pass as one record and the
 * rest would vanish; this one byte pass is what refuses them, before any parse.
 *
 * <p>It also refuses what the parser would read into text that is not Unicode: a string with an
 * unpaired surrogate escape ({@code "\ud800"}), which Java turns into {@code ?}, so that two
 * different user ids would become one key. Everything else (tokens, numbers, escapes) is the
 * parser's to judge.
 */
public final class RecordShape {
  private RecordShape() {}

  /** True when {@link #problem} finds none: the fast check of the parse's hot path. */
  public static boolean isOneObject(byte[] bytes) {
    return problemOf(bytes) == null;
  }

  /** What is wrong with the record's shape, for a dead letter's detail; null if nothing. */
  public static UTF8String problem(UTF8String record) {
    if (record == null) {
      return UTF8String.fromString("record is null");
    }
    String p = problemOf(record.getBytes());
    return p == null ? null : UTF8String.fromString(p);
  }

  static String problemOf(byte[] b) {
    int i = skipSpace(b, 0);
    if (i == b.length) {
      return b.length == 0 ? "record is empty" : "record is only white space";
    }
    if (b[i] != '{') {
      return "record is not a JSON object (it starts with " + shown(b, i) + ")";
    }
    int depth = 0;
    boolean inString = false;
    for (; i < b.length; i++) {
      byte c = b[i];
      if (inString) {
        if (c == '"') {
          inString = false;
        } else if (c == '\\' && i + 1 < b.length) {
          i++;
          if (b[i] == 'u') {
            int end = surrogateEnd(b, i - 1);
            if (end < 0) {
              return "a string holds an unpaired surrogate escape (" + escapeAt(b, i - 1)
                  + ") at byte " + (i - 1) + ", which is not Unicode text";
            }
            i = end;
          }
        }
        continue;
      }
      if (c == '"') {
        inString = true;
      } else if (c == '{' || c == '[') {
        depth++;
      } else if (c == '}' || c == ']') {
        depth--;
        if (depth == 0) {
          int rest = skipSpace(b, i + 1);
          return rest == b.length ? null
              : "record has more after its JSON object, at byte " + rest
                  + " (one JSON object per record)";
        }
      } else if (c == '\'') {
        return "record uses single quotes (at byte " + i + "), which JSON does not allow";
      }
    }
    return "record ends inside its JSON object (cut short?)";
  }

  /**
   * Where a {@code \\uXXXX} escape starting at {@code at} (the backslash) ends (index of its last
   * hex digit, or of the pair's second escape's), or -1 when it is half of a surrogate pair
   * without the other half. Malformed escapes are left to the parser (returns their end).
   */
  private static int surrogateEnd(byte[] b, int at) {
    int unit = hex4(b, at + 2);
    if (unit < 0) {
      return at + 1;
    }
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return -1; // a low surrogate first
    }
    if (unit < 0xD800 || unit > 0xDBFF) {
      return at + 5;
    }
    int next = at + 6;
    if (next + 1 < b.length && b[next] == '\\' && b[next + 1] == 'u') {
      int low = hex4(b, next + 2);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        return next + 5;
      }
    }
    return -1;
  }

  private static int hex4(byte[] b, int from) {
    if (from + 4 > b.length) {
      return -1;
    }
    int v = 0;
    for (int k = from; k < from + 4; k++) {
      int d = Character.digit(b[k], 16);
      if (d < 0) {
        return -1;
      }
      v = v * 16 + d;
    }
    return v;
  }

  private static String escapeAt(byte[] b, int at) {
    return new String(b, at, Math.min(6, b.length - at), StandardCharsets.US_ASCII);
  }

  private static String shown(byte[] b, int i) {
    int c = b[i] & 0xff;
    return c >= 0x21 && c < 0x7f ? "'" + (char) c + "'" : String.format("byte 0x%02x", c);
  }

  private static int skipSpace(byte[] b, int i) {
    while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) {
      i++;
    }
    return i;
  }
}
