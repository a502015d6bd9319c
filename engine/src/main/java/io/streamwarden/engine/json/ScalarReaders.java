package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.CharBuffer;
import java.time.DateTimeException;
import java.time.LocalDate;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampType;

/** Readers of the types that hold one JSON scalar: strings, booleans, numbers, times. */
final class ScalarReaders {
  private ScalarReaders() {}

  /** The reader of a scalar type, or null when the type is not one this reads. */
  static ValueReader of(DataType type) {
    if (type instanceof StringType) {
      return new StringReader(type);
    } else if (type instanceof BooleanType) {
      return new BooleanReader(type);
    } else if (type instanceof ByteType) {
      return new IntegerReader(type, Byte.MIN_VALUE, Byte.MAX_VALUE);
    } else if (type instanceof ShortType) {
      return new IntegerReader(type, Short.MIN_VALUE, Short.MAX_VALUE);
    } else if (type instanceof IntegerType) {
      return new IntegerReader(type, Integer.MIN_VALUE, Integer.MAX_VALUE);
    } else if (type instanceof LongType) {
      return new IntegerReader(type, Long.MIN_VALUE, Long.MAX_VALUE);
    } else if (type instanceof FloatType || type instanceof DoubleType) {
      return new FractionalReader(type);
    } else if (type instanceof DecimalType decimal) {
      return new DecimalReader(decimal);
    } else if (type instanceof TimestampType) {
      return new TimestampReader(type);
    } else if (type instanceof DateType) {
      return new DateReader(type);
    }
    return null;
  }

  /** STRING: a JSON string only, as a UTF8String built from the parser's characters. */
  static final class StringReader extends ValueReader {
    StringReader(DataType type) {
      super(type, "a JSON string");
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.VALUE_STRING) {
        return wrongType(parser, token, reading);
      }
      return Utf8.of(parser.getTextCharacters(), parser.getTextOffset(), parser.getTextLength());
    }
  }

  /** BOOLEAN: {@code true} or {@code false}, nothing that looks like one. */
  static final class BooleanReader extends ValueReader {
    BooleanReader(DataType type) {
      super(type, "true or false");
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      return switch (token) {
        case VALUE_TRUE -> Boolean.TRUE;
        case VALUE_FALSE -> Boolean.FALSE;
        default -> wrongType(parser, token, reading);
      };
    }
  }

  /** TINYINT..BIGINT: a JSON integer token within the type's range (not 12.0, 1e3, "12"). */
  static final class IntegerReader extends ValueReader {
    private final long min;
    private final long max;

    IntegerReader(DataType type, long min, long max) {
      super(type, "a JSON integer from " + min + " to " + max);
      this.min = min;
      this.max = max;
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.VALUE_NUMBER_INT
          || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
        return wrongType(parser, token, reading);
      }
      long value = parser.getLongValue();
      if (value < min || value > max) {
        return wrongType(parser, token, reading);
      }
      return box(value);
    }

    /** The value as the boxed type Spark holds for this type (Byte, Short, Integer, Long). */
    Object box(long value) {
      if (max == Long.MAX_VALUE) {
        return value;
      } else if (max == Integer.MAX_VALUE) {
        return (int) value;
      }
      return max == Short.MAX_VALUE ? (Object) (short) value : (Object) (byte) value;
    }
  }

  /** FLOAT, DOUBLE: any JSON number within the type's range; a string (even "NaN") is not. */
  static final class FractionalReader extends ValueReader {
    private final boolean isFloat;

    FractionalReader(DataType type) {
      super(type, "a JSON number");
      this.isFloat = type instanceof FloatType;
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (!token.isNumeric()) {
        return wrongType(parser, token, reading);
      }
      if (isFloat) {
        float value = parser.getFloatValue();
        return Float.isInfinite(value) ? beyond(parser, token, reading) : (Object) value;
      }
      double value = parser.getDoubleValue();
      return Double.isInfinite(value) ? beyond(parser, token, reading) : (Object) value;
    }

    private Object beyond(JsonParser parser, JsonToken token, Reading reading)
        throws IOException {
      return wrongType(parser, token, reading, ", beyond " + Shown.type(type) + "'s range");
    }
  }

  /** DECIMAL(p,s): a JSON number held exactly with s digits after the point, p in all. */
  static final class DecimalReader extends ValueReader {
    private final int precision;
    private final int scale;

    DecimalReader(DecimalType type) {
      super(type, "a JSON number with at most " + (type.precision() - type.scale())
          + " digits before the point and " + type.scale() + " after");
      this.precision = type.precision();
      this.scale = type.scale();
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (!token.isNumeric()) {
        return wrongType(parser, token, reading);
      }
      BigDecimal exact = exact(parser.getDecimalValue());
      if (exact == null) {
        return wrongType(parser, token, reading);
      }
      return precision <= Decimal.MAX_LONG_DIGITS()
          ? Decimal.createUnsafe(exact.unscaledValue().longValueExact(), precision, scale)
          : Decimal.apply(exact, precision, scale);
    }

    /**
     * The value at this type's scale, or null when that would round it or it has too many digits
     * before the point. Checked before rescaling, so that {@code 1e999999999} costs nothing.
     */
    private BigDecimal exact(BigDecimal value) {
      if (value.signum() == 0) {
        return BigDecimal.ZERO.setScale(scale);
      }
      BigDecimal bare = value.stripTrailingZeros();
      if (bare.scale() > scale || bare.precision() - bare.scale() > precision - scale) {
        return null;
      }
      return bare.setScale(scale, RoundingMode.UNNECESSARY);
    }
  }

  /**
   * TIMESTAMP: a JSON string {@link EventTimes} accepts, as epoch microseconds; a string it does
   * not accept is {@code invalid_timestamp}, any other value {@code wrong_type}.
   */
  static final class TimestampReader extends ValueReader {
    TimestampReader(DataType type) {
      super(type, "a JSON string, an ISO-8601 time with a zone");
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.VALUE_STRING) {
        return wrongType(parser, token, reading);
      }
      long micros = EventTimes.parseMicros(CharBuffer.wrap(parser.getTextCharacters(),
          parser.getTextOffset(), parser.getTextLength()));
      if (micros == EventTimes.INVALID) {
        if (reading.wins()) {
          reading.problem(RecordReader.INVALID_TIMESTAMP, "'" + reading.name() + "' "
              + Shown.quoted(parser.getText())
              + " is not an ISO-8601 time with a zone (e.g. 2026-01-01T12:00:00Z)");
        }
        return null;
      }
      return micros;
    }
  }

  /** DATE: a JSON string {@code yyyy-MM-dd} (years 0001..9999), as days since the epoch. */
  static final class DateReader extends ValueReader {
    DateReader(DataType type) {
      super(type, "a JSON string yyyy-MM-dd");
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.VALUE_STRING) {
        return wrongType(parser, token, reading);
      }
      int days = days(parser.getTextCharacters(), parser.getTextOffset(),
          parser.getTextLength());
      return days == Integer.MIN_VALUE ? wrongType(parser, token, reading) : (Object) days;
    }

    private static int days(char[] text, int offset, int length) {
      if (length != 10 || text[offset + 4] != '-' || text[offset + 7] != '-') {
        return Integer.MIN_VALUE;
      }
      int year = digits(text, offset, 4);
      int month = digits(text, offset + 5, 2);
      int day = digits(text, offset + 8, 2);
      if (year < 1 || month < 0 || day < 0) {
        return Integer.MIN_VALUE;
      }
      try {
        return (int) LocalDate.of(year, month, day).toEpochDay();
      } catch (DateTimeException e) {
        return Integer.MIN_VALUE;
      }
    }

    private static int digits(char[] text, int from, int count) {
      int value = 0;
      for (int i = from; i < from + count; i++) {
        if (text[i] < '0' || text[i] > '9') {
          return -1;
        }
        value = value * 10 + (text[i] - '0');
      }
      return value;
    }
  }
}
