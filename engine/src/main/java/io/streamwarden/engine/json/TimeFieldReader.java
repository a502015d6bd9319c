package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.TimestampType;

/**
 * The event-time field: read as its declared type (TIMESTAMP, BIGINT or INT), then kept in
 * epoch milliseconds for the record ({@link Reading#timeMs}). An integer is epoch time in the
 * spec's unit; one outside {@link EventTimes#MIN_MS}..{@link EventTimes#MAX_MS} once in
 * milliseconds, or too large for a BIGINT, is {@code invalid_timestamp} (the field keeps a value
 * its type holds, the record has no event time).
 */
final class TimeFieldReader extends ValueReader {
  /** Epoch time units of an integer time field, as the spec names them. */
  enum Unit {
    SECONDS("s"), MILLIS("ms"), MICROS("us");

    final String symbol;

    Unit(String symbol) {
      this.symbol = symbol;
    }

    /** The unit a spec names {@code s}, {@code ms} or {@code us}; null for any other name. */
    static Unit named(String symbol) {
      for (Unit unit : values()) {
        if (unit.symbol.equals(symbol)) {
          return unit;
        }
      }
      return null;
    }

    /** Epoch milliseconds (floor for microseconds), or {@link EventTimes#INVALID}. */
    long toMillis(long value) {
      return switch (this) {
        case SECONDS -> value > Long.MAX_VALUE / 1000 || value < Long.MIN_VALUE / 1000
            ? EventTimes.INVALID : value * 1000;
        case MILLIS -> value;
        case MICROS -> Math.floorDiv(value, 1000L);
      };
    }
  }

  private final ValueReader inner;
  private final Unit unit;
  private final boolean isTimestamp;
  private final boolean isLong;

  TimeFieldReader(ValueReader inner, Unit unit) {
    super(inner.type, "unused"); // every problem is told by the inner reader or here
    this.inner = inner;
    this.unit = unit;
    this.isTimestamp = inner.type instanceof TimestampType;
    this.isLong = inner.type instanceof LongType;
  }

  @Override
  Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
    if (isLong && token == JsonToken.VALUE_NUMBER_INT
        && parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      outside(parser, reading);
      return null;
    }
    Object value = inner.read(parser, token, reading);
    if (value == null) {
      return null;
    }
    long read = ((Number) value).longValue();
    long ms = isTimestamp ? Math.floorDiv(read, 1000L) : unit.toMillis(read);
    if (ms == EventTimes.INVALID || ms < EventTimes.MIN_MS || ms > EventTimes.MAX_MS) {
      outside(parser, reading); // a TIMESTAMP's micros are always inside
    } else {
      reading.timeMs = ms;
      reading.hasTime = true;
    }
    return value;
  }

  private void outside(JsonParser parser, Reading reading) throws IOException {
    if (reading.wins()) {
      reading.problem(RecordReader.INVALID_TIMESTAMP, "'" + reading.name() + "' "
          + Shown.cut(parser.getText()) + " (" + unit.symbol + ") is outside the event times"
          + " accepted, 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z");
    }
  }
}
