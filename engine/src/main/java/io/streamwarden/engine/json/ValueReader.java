package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.types.DataType;

/**
 * Reads one JSON value of a declared type into Spark's internal value of that type, coercing
 * nothing. A tree of these is built once per spec ({@link ReaderSpec}) and reused for every
 * record of a thread; readers that keep scratch space are therefore never shared by threads.
 */
abstract class ValueReader {
  final DataType type;
  /** "a DOUBLE (a JSON number)": what a wrong value is told it must be. */
  private final String expected;

  ValueReader(DataType type, String json) {
    this.type = type;
    this.expected = Shown.type(type) + " (" + json + ")";
  }

  /**
   * Reads the value whose first token is {@code token} (never {@code VALUE_NULL}, which the
   * caller reads as null), leaving the parser on the value's last token. Returns the value, or
   * null after telling {@code reading} what is wrong with it.
   */
  abstract Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException;

  /** A value that is not of the declared type: a {@code wrong_type} problem, the value skipped. */
  final Object wrongType(JsonParser parser, JsonToken token, Reading reading) throws IOException {
    return wrongType(parser, token, reading, "");
  }

  /** As {@link #wrongType(JsonParser, JsonToken, Reading)}, with words after the value. */
  final Object wrongType(JsonParser parser, JsonToken token, Reading reading, String why)
      throws IOException {
    if (reading.wins()) {
      reading.problem(RecordReader.WRONG_TYPE, "'" + reading.name() + "' must be " + expected
          + ", got " + Shown.value(parser, token) + why);
    }
    if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
      parser.skipChildren();
    }
    return null;
  }
}
